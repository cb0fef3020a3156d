#!/usr/bin/env node
/**
 * `node scripts/run.mjs <entry.ts> [args...]`: runs a TypeScript entry point as one
 * esbuild bundle, cached under node_modules/.cache/karpenter-gitops/run/ and keyed by the
 * content of every source the bundle was built from (esbuild's own list of the files it
 * read) plus package.json, the lockfiles, tsconfig.json and this file. Why: tsx compiles
 * each file on every run and node then loads hundreds of dependency files one by one;
 * a cached bundle starts in a fraction of that, and a content key never runs stale code.
 *
 * Each run checks the key cheaply: an input whose size, mtime, ctime and inode are as
 * recorded is unchanged (any write changes ctime); any other input is hashed again. The
 * bundle's own files are checked the same way, so a damaged entry is rebuilt. Builds go
 * to a temporary directory renamed into place: two first runs at once both build, one
 * rename wins, both run the same bytes. Anything wrong with the cache or the build falls
 * back to tsx, which then reports real source errors itself.
 *
 * KARPENTER_GITOPS_RUN_DEBUG=1 prints one line on stderr: hit, built (and why), or fallback.
 * KARPENTER_GITOPS_RUN_CACHE=<dir> moves the cache (tests); external packages still
 * resolve from the bundle's location, so keep it inside a directory that sees node_modules.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bump when the bundle's layout or meaning changes without this file's bytes changing much. */
const FORMAT = 1;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SELF = fileURLToPath(import.meta.url);
/** Inputs that change what esbuild produces without being imported: the dependency tree, compiler options, this launcher. */
const EXTRA_INPUTS = ['package.json', 'package-lock.json', join('node_modules', '.package-lock.json'), 'tsconfig.json', relative(ROOT, SELF)];
/** Loaded from node_modules at run time instead of bundled: the AWS SDK (only ever imported lazily, large, loads its credential providers dynamically) and the dev tools. */
const ALWAYS_EXTERNAL = ['@aws-sdk/*', '@smithy/*', '@aws-crypto/*'];
const debug = process.env.KARPENTER_GITOPS_RUN_DEBUG ? (line) => process.stderr.write(`run.mjs: ${line}\n`) : () => {};

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const statOf = (path) => {
  const s = statSync(path, { throwIfNoEntry: false });
  return s ? { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino } : undefined;
};
const sameStat = (a, b) => a !== undefined && b !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

/** `{path, stat, hash}` of a file as it is now; stat is taken before reading, so a write during the read shows next time. */
function fingerprint(base, path) {
  const abs = join(base, path);
  const stat = statOf(abs);
  if (!stat) return { path, stat: null, hash: 'absent' };
  return { path, stat, hash: sha256(readFileSync(abs)) };
}

/**
 * True when every recorded file still has its recorded content. Files whose stat
 * changed are hashed; `refreshed` collects their new stats so the next check is cheap again.
 */
function unchanged(base, recorded, refreshed) {
  for (const r of recorded) {
    const now = statOf(join(base, r.path));
    if (r.stat === null) {
      if (now !== undefined) return `${r.path} appeared`;
      continue;
    }
    if (sameStat(now, r.stat)) continue;
    if (now === undefined) return `${r.path} is gone`;
    const again = fingerprint(base, r.path);
    if (again.hash !== r.hash) return `${r.path} changed`;
    refreshed.push(again);
  }
  return undefined;
}

function keyOf(inputs) {
  return sha256(JSON.stringify([FORMAT, ...inputs.map((i) => [i.path, i.hash])].sort())).slice(0, 24);
}

function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function listFiles(dir, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? listFiles(dir, join(prefix, d.name)) : [join(prefix, d.name)],
  );
}

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.json': 'json' };
const inNodeModules = (path) => relative(ROOT, path).split(sep).includes('node_modules');

/**
 * Builds the bundle into a fresh directory under `cache` and returns it with the inputs
 * it was built from. Our own sources are read by the plugin, which hashes exactly the
 * bytes esbuild compiles and gives each file its own `import.meta` (the bundle lives
 * elsewhere, but code such as `new URL('..', import.meta.url)` means the source's place).
 */
async function build(entry, cache) {
  const { build: esbuild } = await import('esbuild');
  const sources = new Map();
  const extras = EXTRA_INPUTS.map((p) => fingerprint(ROOT, p));
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const sourcePlugin = {
    name: 'karpenter-gitops-sources',
    setup(b) {
      b.onLoad({ filter: /\.(m|c)?[jt]sx?$|\.json$/ }, (args) => {
        if (inNodeModules(args.path)) return undefined;
        const stat = statOf(args.path);
        const bytes = readFileSync(args.path);
        sources.set(args.path, { path: relative(ROOT, args.path), stat, hash: sha256(bytes) });
        const loader = LOADERS[extname(args.path)];
        if (loader === 'json') return { contents: bytes, loader };
        const url = pathToFileURL(args.path).href;
        const contents = bytes
          .toString('utf8')
          .replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_m, p) => JSON.stringify(p === 'url' ? url : p === 'dirname' ? dirname(args.path) : args.path));
        return { contents, loader };
      });
    },
  };
  mkdirSync(cache, { recursive: true });
  const outdir = mkdtempSync(join(cache, 'tmp-'));
  try {
    const result = await esbuild({
      entryPoints: { main: entry },
      absWorkingDir: ROOT,
      bundle: true,
      splitting: true, // dynamic import() stays lazy: its module is a chunk loaded only when reached
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node}`,
      outdir,
      chunkNames: '[name]-[hash]',
      sourcemap: 'linked', // used with --enable-source-maps
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      external: [...ALWAYS_EXTERNAL, ...Object.keys(pkg.devDependencies ?? {})],
      // Bundled CommonJS dependencies call require() for node built-ins.
      banner: { js: `import { createRequire as __kgCreateRequire } from 'node:module';\nconst require = __kgCreateRequire(${JSON.stringify(pathToFileURL(join(ROOT, 'package.json')).href)});` },
      plugins: [sourcePlugin],
    });
    // What each file of the bundle holds and imports (statically or lazily): for tests and `npm run bench`.
    // Output paths relative to the bundle directory, so that two builds of the same inputs are byte-identical.
    const local = (path) => relative(outdir, resolve(ROOT, path));
    const outputs = Object.fromEntries(
      Object.entries(result.metafile.outputs).map(([path, o]) => [local(path), { ...o, imports: o.imports.map((i) => (i.external ? i : { ...i, path: local(i.path) })) }]),
    );
    writeFileSync(join(outdir, 'meta.json'), JSON.stringify({ ...result.metafile, outputs }));
    const unread = Object.keys(result.metafile.inputs)
      .map((p) => resolve(ROOT, p))
      .filter((p) => !inNodeModules(p) && !sources.has(p) && statOf(p) !== undefined)
      .map((p) => fingerprint(ROOT, relative(ROOT, p)));
    return { outdir, inputs: [...sources.values(), ...unread, ...extras] };
  } catch (err) {
    rmSync(outdir, { recursive: true, force: true });
    throw err;
  }
}

/** Drops this entry's older bundles once they are an hour old (a run still using one has long finished). */
function prune(cache, slot, keep) {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    const old = (statOf(path)?.mtimeMs ?? Date.now()) < Date.now() - 3_600_000;
    if (old && ((name.startsWith(`${slot}-`) && name !== keep) || name.startsWith('tmp-'))) rmSync(path, { recursive: true, force: true });
  }
}

/** Files of a bundle directory with their hashes, for the cache index. */
const outputsOf = (dir) => listFiles(dir).sort().map((f) => fingerprint(dir, f));
const sameOutputs = (a, b) => a.length === b.length && a.every((o, i) => o.path === b[i].path && o.hash === b[i].hash);

/** The bundle's main file for `entry`, building it when the cache has no valid one. */
async function bundleFor(entry) {
  const cache = process.env.KARPENTER_GITOPS_RUN_CACHE ? resolve(process.env.KARPENTER_GITOPS_RUN_CACHE) : join(ROOT, 'node_modules', '.cache', 'karpenter-gitops', 'run');
  const slot = sha256(JSON.stringify([FORMAT, ROOT, entry, process.version, process.arch])).slice(0, 16);
  const indexFile = join(cache, `${slot}.json`);

  let why = 'no cache entry';
  let index;
  try {
    index = JSON.parse(readFileSync(indexFile, 'utf8'));
  } catch (err) {
    if (err.code !== 'ENOENT') why = 'cache index unreadable';
  }
  if (index) {
    const dir = join(cache, `${slot}-${index.key}`);
    const refreshed = [];
    const changed = unchanged(ROOT, index.inputs, refreshed);
    const damaged = changed === undefined ? unchanged(dir, index.outputs, refreshed) : undefined;
    if (changed === undefined && damaged === undefined) {
      if (refreshed.length > 0) {
        // Touched but identical: remember the new stats so the next run skips the hashing.
        const byPath = new Map(refreshed.map((r) => [r.path, r]));
        const update = (list) => list.map((r) => byPath.get(r.path) ?? r);
        try {
          writeAtomic(indexFile, JSON.stringify({ ...index, inputs: update(index.inputs), outputs: update(index.outputs) }));
        } catch {
          // A cache we cannot update is only slower.
        }
      }
      debug('hit');
      return join(dir, 'main.js');
    }
    why = changed ?? `bundle damaged: ${damaged}`;
    if (damaged !== undefined) rmSync(dir, { recursive: true, force: true });
  }

  const { outdir, inputs } = await build(entry, cache);
  const key = keyOf(inputs);
  const dir = join(cache, `${slot}-${key}`);
  const outputs = outputsOf(outdir);
  try {
    renameSync(outdir, dir);
  } catch (err) {
    if (!['ENOTEMPTY', 'EEXIST', 'EPERM'].includes(err.code)) throw err;
    // Another run put the same key in place first: same inputs, so the same bytes, unless
    // that copy was damaged since (then ours replaces it).
    if (!sameOutputs(outputsOf(dir), outputs)) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(outdir, dir);
    }
    rmSync(outdir, { recursive: true, force: true });
  }
  // Stats of the directory that is in place now (ours, or the winner's identical files).
  writeAtomic(indexFile, JSON.stringify({ key, inputs, outputs: outputsOf(dir) }));
  prune(cache, slot, `${slot}-${key}`);
  debug(`built (${why})`);
  return join(dir, 'main.js');
}

const [entryArg, ...args] = process.argv.slice(2);
if (!entryArg) {
  process.stderr.write('usage: node scripts/run.mjs <entry.ts> [args...]\n');
  process.exit(2);
}
const entry = isAbsolute(entryArg) ? entryArg : resolve(process.cwd(), entryArg);
// The entry sees itself as the script: argv[1] is its path, as under tsx or node.
process.argv.splice(1, process.argv.length - 1, entry, ...args);

let main;
try {
  main = await bundleFor(entry);
} catch (err) {
  if (Array.isArray(err.errors) && err.errors.length > 0) {
    // esbuild could not compile the sources (a syntax error, an import that does not resolve): tsx would fail the same way.
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  debug(`fallback to tsx (${err.message.split('\n')[0]})`);
}
if (main && process.env.KARPENTER_GITOPS_RUN_WHERE) {
  // For npm run bench: the bundle this checkout runs for the entry, built if need be; not run.
  process.stdout.write(`${main}\n`);
} else if (main) {
  await import(pathToFileURL(main).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(entry).href);
}
