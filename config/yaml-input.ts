import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { isAlias, isCollection, isPair, isScalar, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { ConfigError, describeValue, formatPath, issuesFromZod, scalarsOf } from './errors.js';

/** Input files are hand-written config: a few KiB. A larger one is a mistake (or /dev/zero behind a symlink). */
export const MAX_INPUT_BYTES = 1024 * 1024;
/**
 * Nodes a document may have once its aliases are expanded. Real files reuse an anchor a few
 * hundred times at most (120 uses of a 20-node pool is 2,400 nodes); a "billion laughs" bomb
 * of ten nested anchors expands to 10^10 and is refused at the alias that crosses this.
 */
export const MAX_EXPANDED_NODES = 100_000;

/**
 * Parses a YAML config file that must be a map and validates it with a zod schema.
 * Duplicate keys are errors (a second `cluster:` silently winning is how typos ship).
 * `shape` completes "must be a YAML map with ...". YAML errors are located as
 * `file:line:col`, with the parser's own line and column.
 */
export function parseYamlInput<S extends z.ZodType>(file: string, text: string, schema: S, shape: string, opts: YamlInputOptions = {}): z.infer<S> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
  if (doc.errors.length > 0) {
    throw aggregate(
      doc.errors.map((e) => {
        // prettyErrors appends " at line L, column C:" and a code frame: keep the sentence, the position goes in front.
        const sentence = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '');
        const pos = e.linePos?.[0];
        return located(file, pos, '', `is not valid YAML: ${sentence}`);
      }),
    );
  }
  checkNodes(file, doc, lineCounter, opts);
  // checkNodes bounded the expansion, so the library's own (much lower) alias limit is not needed.
  const raw: unknown = doc.toJS({ maxAliasCount: -1 });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: '', message: `must be a YAML map with ${shape}, got ${describeValue(raw)}` }]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, issuesFromZod(parsed.error, raw, scalarsOf(doc)));
  return parsed.data;
}

export interface YamlInputOptions {
  /** Its maps (labels, tags, annotations) are rendered into manifests by cdk8s: refuse the keys cdk8s cannot render too. */
  readonly mapsBecomeManifests?: boolean;
  /** Field paths (such as `environments.prod`) whose key is a name, never rendered as a map key: exempt from the cdk8s rule. */
  readonly namesAt?: RegExp;
}

/**
 * One walk of the document, stopping at the first problem: a map key the toolchain cannot
 * carry (RESERVED_KEYS, and MANIFEST_RESERVED_KEYS where `opts` say its maps are rendered),
 * or an alias that names no anchor before it, sits inside its own anchor, or makes all of
 * them together expand the document past MAX_EXPANDED_NODES.
 */
function checkNodes(file: string, doc: Document, lineCounter: LineCounter, opts: YamlInputOptions): void {
  const sizes = new Map<Node, number>();
  const open = new Set<Node>();
  let total = 0;
  let failure: ConfigError | undefined;
  const where = (node: Node) => (node.range ? lineCounter.linePos(node.range[0]) : undefined);
  const sizeOf = (node: unknown): number => {
    if (isAlias(node)) {
      const target = node.resolve(doc);
      return target === undefined || open.has(target) ? 1 : sizeOf(target);
    }
    if (!isCollection(node) && !isScalar(node)) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    open.add(node);
    let n = 1;
    if (isCollection(node)) {
      for (const item of node.items as unknown[]) {
        n += isPair(item) ? sizeOf(item.key) + sizeOf(item.value) : sizeOf(item);
        if (n > MAX_EXPANDED_NODES) break;
      }
    }
    open.delete(node);
    sizes.set(node, n);
    return n;
  };
  visit(doc, {
    Pair(_key, pair, ancestors) {
      const key = pair.key;
      if (!isScalar(key) || typeof key.value !== 'string' || !(RESERVED_KEYS.has(key.value) || MANIFEST_RESERVED_KEYS.has(key.value))) return undefined;
      const path = pathOf([...ancestors, pair], pair.value);
      const why = RESERVED_KEYS.get(key.value) ?? (opts.mapsBecomeManifests && !opts.namesAt?.test(path) ? MANIFEST_RESERVED_KEYS.get(key.value) : undefined);
      if (why === undefined) return undefined;
      failure = located(file, where(key), path, `key ${JSON.stringify(key.value)} is not allowed: ${why}; rename the key`);
      return visit.BREAK;
    },
    Alias(_key, node, ancestors) {
      const path = pathOf(ancestors, node);
      const target = node.resolve(doc);
      if (target === undefined) {
        failure = located(file, where(node), path, `is not valid YAML: alias *${node.source} names no anchor; define &${node.source} on an earlier value first`);
        return visit.BREAK;
      }
      if ((ancestors as readonly unknown[]).includes(target)) {
        failure = located(file, where(node), path, `is not valid YAML: alias *${node.source} is inside the value it names (a value cannot contain itself)`);
        return visit.BREAK;
      }
      total += sizeOf(target);
      if (total > MAX_EXPANDED_NODES) {
        failure = located(
          file,
          where(node),
          path,
          `is not valid YAML: alias *${node.source} makes the document expand to more than ${MAX_EXPANDED_NODES.toLocaleString('en-US')} values (nested aliases multiply: an alias bomb?); use fewer aliases`,
        );
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (failure) throw failure;
}

/**
 * Map keys that JavaScript gives a meaning, which a tag, label or annotation of that name
 * would lose on its way to the manifests: refused where they are written, with the reason.
 */
const RESERVED_KEYS: ReadonlyMap<string, string> = new Map([
  // zod and plain objects drop an own __proto__ key without a word.
  ['__proto__', 'it names the JavaScript object prototype, which this toolchain cannot carry as a key (it would be dropped from the manifests)'],
]);
const MANIFEST_RESERVED_KEYS: ReadonlyMap<string, string> = new Map([
  // cdk8s takes a map whose `constructor` is not Object for a class instance and refuses to render it.
  ['constructor', 'cdk8s, which renders the manifests, cannot render a map with this key (it takes the map for a class instance)'],
]);

/** The field path (`nodePools[0].preset`) of a node, from the ancestors `visit` gives. */
function pathOf(ancestors: readonly unknown[], node: unknown): string {
  const segments: PropertyKey[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i += 1) {
    const parent = chain[i];
    const child = chain[i + 1];
    if (isPair(parent)) {
      if (parent.value !== child) return formatPath(segments); // inside a key: stop there
      segments.push(isScalar(parent.key) ? String(parent.key.value) : String(parent.key));
    } else if (isCollection(parent) && !isPair(child)) {
      segments.push((parent.items as unknown[]).indexOf(child));
    }
  }
  return formatPath(segments);
}

/**
 * `file:line:col` of the value at `path` in a YAML input file, or just `file` when it cannot
 * be found: for checks that run after parsing and still want to point at the line.
 */
export function locate(root: string, file: string, path: readonly (string | number)[]): string {
  try {
    const lineCounter = new LineCounter();
    const doc = parseDocument(readInputText(`${root}${sep}${file}`, file, root), { lineCounter });
    const node = doc.getIn(path, true) as Node | undefined;
    if (!node?.range) return file;
    const { line, col } = lineCounter.linePos(node.range[0]);
    return `${file}:${line}:${col}`;
  } catch {
    return file;
  }
}

function located(file: string, pos: { line: number; col: number } | undefined, path: string, message: string): ConfigError {
  return new ConfigError(pos ? `${file}:${pos.line}:${pos.col}` : file, [{ path, message }]);
}

function aggregate(errors: readonly ConfigError[]): ConfigError {
  if (errors.length === 1) return errors[0]!;
  const all = new ConfigError(errors[0]!.file, errors.flatMap((e) => e.issues));
  all.message = errors.map((e) => e.message).join('\n');
  return all;
}

/**
 * Reads an input file. Only a regular file is read, only inside the repository (when the
 * root is known), and at most MAX_INPUT_BYTES of it: a symlink to /dev/zero or a FIFO must
 * neither hang nor exhaust memory, and nothing of a file outside the repository may appear
 * in a message. The text must be UTF-8 (a stray Latin-1 byte would otherwise be written
 * out as U+FFFD). Anything else is a ConfigError naming the file.
 *
 * `root` defaults to what `path` has in front of `file` (`/repo/environments/dev.yaml`
 * and `environments/dev.yaml` give `/repo`).
 */
export function readInputText(path: string, file: string, root = rootOf(path, file)): string {
  const refuse = (message: string, pos?: { line: number; col: number }) => located(file, pos, '', message);
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw refuse(isSymlink(path) ? 'is a symbolic link to a file that does not exist' : 'does not exist');
    throw refuse(`cannot be read (${code ?? String(err)})`);
  }
  if (root !== undefined) {
    let realRoot: string;
    try {
      realRoot = realpathSync(root);
    } catch {
      realRoot = root;
    }
    const rel = relative(realRoot, real);
    if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
      throw refuse('must be a file inside the repository, got a symbolic link that leads outside it (its contents are not read)');
    }
  }
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refuse(`must be a regular file, got ${kindOf(st)}`);
    if (st.size > MAX_INPUT_BYTES) throw refuse(`is ${st.size.toLocaleString('en-US')} bytes; input files may be at most ${MAX_INPUT_BYTES.toLocaleString('en-US')} bytes (1 MiB)`);
    // Not zero-filled (only the bytes read are used): zeroing 1 MiB per file was most of
    // reading 600 small files.
    const buf = Buffer.allocUnsafe(MAX_INPUT_BYTES + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > MAX_INPUT_BYTES) throw refuse(`grew past ${MAX_INPUT_BYTES.toLocaleString('en-US')} bytes (1 MiB) while being read`);
    }
    return decodeUtf8(buf.subarray(0, length), refuse);
  } finally {
    closeSync(fd);
  }
}

function decodeUtf8(bytes: Buffer, refuse: (message: string, pos?: { line: number; col: number }) => ConfigError): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Find the first bad byte: a prefix decodes (in stream mode) exactly when it holds no invalid sequence.
    let lo = 0;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid + 1), { stream: true });
        lo = mid + 1;
      } catch {
        hi = mid;
      }
    }
    // lo is where decoding fails; the bad sequence may have started at a lead byte before it.
    let at = Math.min(lo, bytes.length - 1);
    for (let k = at - 1; k >= Math.max(0, at - 3); k -= 1) {
      if (bytes[k]! >= 0xc0) {
        at = k;
        break;
      }
      if (bytes[k]! < 0x80) break;
    }
    const lineStart = bytes.lastIndexOf(0x0a, at - 1) + 1;
    const line = bytes.subarray(0, lineStart).filter((b) => b === 0x0a).length + 1;
    const col = [...bytes.subarray(lineStart, at).toString('utf8')].length + 1;
    throw refuse(`is not valid UTF-8 (byte 0x${bytes[at]!.toString(16).padStart(2, '0')}); save the file as UTF-8`, { line, col });
  }
}

function rootOf(path: string, file: string): string | undefined {
  if (isAbsolute(file) || file.startsWith('..')) return undefined;
  const suffix = `${sep}${file.split('/').join(sep)}`;
  return path.endsWith(suffix) ? path.slice(0, -suffix.length) || sep : undefined;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'a special file';
}
