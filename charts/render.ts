import { Document, parse, visit } from 'yaml';

/** A Kubernetes object as JSON, as cdk8s renders it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [k: string]: unknown };
  readonly [k: string]: unknown;
}

/** The same file name cdk8s gives in FOLDER_PER_CHART_FILE_PER_RESOURCE mode. */
export function fileNameFor(m: Manifest): string {
  return `${`${m.kind}.${m.metadata.name}`.replace(/[^0-9a-zA-Z-_.]/g, '')}.k8s.yaml`;
}

/** One file per object; two objects that would share a file are an error, never an overwrite. */
export function renderFiles(objects: readonly Manifest[], where: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of objects) {
    const name = fileNameFor(m);
    if (files.has(name)) throw new Error(`${where}: two objects would be written to ${name}: ${m.kind} "${m.metadata.name}" is defined twice`);
    files.set(name, toYaml(m));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Integers as Go's strconv.ParseInt(s, 0, 64) reads them, which is how go-yaml v2 (kubectl,
 * Argo CD and the API server's YAML path, through sigs.k8s.io/yaml) resolves a plain scalar:
 * `0o17`, `0x1F`, `0b101` and `1_000` are numbers there although YAML 1.1 and 1.2 disagree.
 */
const GO_INT = /^[-+]?(0[xX][_0-9a-fA-F]+|0[oO][_0-7]+|0[bB][_01]+|[0-9][_0-9]*)$/;

/**
 * True when a string written as a plain scalar would be read back as something else by
 * some reader of our output: YAML 1.1 (`yes`, `on`, `~`, `1:20`, `.inf`, `017`), YAML 1.2
 * (`0o17`, `null`, `1e3`) or go-yaml v2 (the Go integer syntax above).
 */
export function plainScalarIsAmbiguous(text: string): boolean {
  // Most strings of a manifest are names and keys: a letter, then letters, digits and
  // `_./-`. No YAML 1.1 or 1.2 type (numbers, dates, .inf/.nan, ~, <<) starts with a
  // letter except the booleans and nulls, and the `yaml` package's YAML 1.1 float without
  // a mantissa (`e0`, `E+5`), so those strings are plain without parsing them twice (which
  // was most of synth's time; test/charts/render.test.ts checks the shortcut against the
  // parse on generated strings).
  if (PLAIN_NAME.test(text) && !EXPONENT_FIRST.test(text) && !WORDS.has(text.toLowerCase())) return false;
  let known = ambiguity.get(text);
  if (known === undefined) ambiguity.set(text, (known = parsedAmbiguous(text)));
  return known;
}

const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_./-]*$/;
const EXPONENT_FIRST = /^[eE][-+0-9_.]/;
/** Letter-first words some YAML schema reads as a boolean or null (compared lower-cased). */
const WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null']);
/** Other strings repeat too (values of keys, quantities): parsed once per run. */
const ambiguity = new Map<string, boolean>();

function parsedAmbiguous(text: string): boolean {
  // Multi-line text is written as a block scalar (`|`), which every reader takes as a string.
  if (text.includes('\n')) return false;
  if (GO_INT.test(text)) return true;
  for (const version of ['1.1', '1.2'] as const) {
    try {
      // logLevel error: a string such as `!x` reads as an unknown tag, which is an answer here, not a warning for the user.
      if (parse(text, { version, logLevel: 'error' }) !== text) return true;
    } catch {
      return true; // not a valid plain scalar at all: quoting is always safe
    }
  }
  return false;
}

/**
 * One object as YAML, the way cdk8s writes it (YAML 1.1 schema, no line folding), except
 * that every string key or value another reader could take for a number, boolean or null
 * is double-quoted: `team: "0o17"` must reach the API server as a string. The one place
 * dist/ and argocd/ are rendered, so both get it.
 */
export function toYaml(value: unknown): string {
  return fastYaml(value) ?? documentYaml(value);
}

/** toYaml through the `yaml` package's document model: every case, slowly. */
export function documentYaml(value: unknown): string {
  const doc = new Document(value, { version: '1.1', keepUndefined: true });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && plainScalarIsAmbiguous(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/**
 * toYaml's output, byte for byte, for the objects synth makes (maps, lists, integers,
 * booleans, null and one-line strings of common characters), written directly: building
 * a `yaml` Document per object was a third of synth's time at 10,000 NodePools. Anything
 * else (multi-line or unusual strings, floats, undefined) gives undefined, and toYaml
 * takes the document path. test/charts/render.test.ts compares both on the committed
 * output and on generated values.
 */
export function fastYaml(value: unknown): string | undefined {
  const out: string[] = [];
  if (isMap(value)) {
    if (Object.keys(value).length === 0) return '{}\n';
    if (!blockMap(value, '', out)) return undefined;
  } else if (Array.isArray(value)) {
    if (value.length === 0) return '[]\n';
    if (!blockSeq(value, '', out)) return undefined;
  } else {
    const text = scalar(value);
    if (text === undefined) return undefined;
    out.push(text, '\n');
  }
  return out.join('');
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Printable ASCII without a double quote or a backslash: its double-quoted YAML is its JSON. */
const PRINTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Strings the `yaml` package writes plain when not ambiguous: no indicator first (and, below, no `: `, ` #` or trailing blank or colon). */
const SIMPLE = /^[A-Za-z0-9_./$(][A-Za-z0-9 _./:=@+,$%*'"()<>;~^!?&|#[\]{}\\-]*$/;

function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') {
    if (v.length > 1000 || !PRINTABLE.test(v)) return undefined;
    if (plainScalarIsAmbiguous(v)) return JSON.stringify(v); // toYaml double-quotes these (`"-1"`, `"0o17"`)
    return SIMPLE.test(v) && !v.endsWith(' ') && !v.endsWith(':') && !v.includes(': ') && !v.includes(' #') ? v : undefined;
  }
  if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0) ? String(v) : undefined;
  if (typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  return undefined;
}

/** `key:` and its value (inline scalar or empty collection, else a nested block) onto `out`; `first` prefixes the line. */
function blockMap(map: Record<string, unknown>, indent: string, out: string[], first = indent): boolean {
  let lead = first;
  for (const key of Object.keys(map)) {
    const k = scalar(key);
    if (k === undefined) return false;
    out.push(lead, k, ':');
    lead = indent;
    if (!blockValue(map[key], `${indent}  `, out)) return false;
  }
  return true;
}

function blockSeq(list: readonly unknown[], indent: string, out: string[], first = indent): boolean {
  let lead = first;
  for (const item of list) {
    out.push(lead, '- ');
    lead = indent;
    if (isMap(item) && Object.keys(item).length > 0) {
      if (!blockMap(item, `${indent}  `, out, '')) return false;
    } else if (Array.isArray(item) && item.length > 0) {
      if (!blockSeq(item, `${indent}  `, out, '')) return false;
    } else {
      const text = inline(item);
      if (text === undefined) return false;
      out.push(text, '\n');
    }
  }
  return true;
}

/** After `key:`: a scalar or `{}`/`[]` on the same line, or a nested block on the next lines at `indent`. */
function blockValue(v: unknown, indent: string, out: string[]): boolean {
  if (isMap(v) && Object.keys(v).length > 0) {
    out.push('\n');
    return blockMap(v, indent, out);
  }
  if (Array.isArray(v) && v.length > 0) {
    out.push('\n');
    return blockSeq(v, indent, out);
  }
  const text = inline(v);
  if (text === undefined) return false;
  out.push(' ', text, '\n');
  return true;
}

function inline(v: unknown): string | undefined {
  if (isMap(v)) return '{}';
  if (Array.isArray(v)) return '[]';
  return scalar(v);
}
