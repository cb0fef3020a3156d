import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, snapshotTree, tempRepo } from '../support/repo.js';

/**
 * scripts/run.mjs, the launcher of `npm run synth` and `npm run infra`, against a small
 * temp project (its own sources, package.json and lockfile; node_modules linked to this
 * checkout's, so esbuild and tsx are the real ones) and against the real synth entry.
 */

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function project() {
  const root = mkdtempSync(join(tmpdir(), 'run-mjs-'));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'src'));
  copyFileSync(join(REPO, 'scripts/run.mjs'), join(root, 'scripts/run.mjs'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'p', private: true, type: 'module' }));
  writeFileSync(join(root, 'package-lock.json'), JSON.stringify({ name: 'p', lockfileVersion: 3 }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true } }));
  // A dependency (bundled), a local module, the script's own view of itself, an exit code.
  writeFileSync(
    join(root, 'src/entry.ts'),
    [
      `import { stringify } from 'yaml';`,
      `import { value } from './lib.js';`,
      `const v: string = value;`,
      `process.stdout.write(JSON.stringify({ value: v, yaml: stringify({ a: 1 }), argv: process.argv.slice(1), url: import.meta.url, dirname: import.meta.dirname }) + '\\n');`,
      `if (process.argv.includes('--exit-3')) process.exitCode = 3;`,
    ].join('\n'),
  );
  writeFileSync(join(root, 'src/lib.ts'), `export const value = 'one';\n`);
  const cache = join(root, 'cache');
  const env = { ...process.env, KARPENTER_GITOPS_RUN_DEBUG: '1', KARPENTER_GITOPS_RUN_CACHE: cache };
  return {
    root,
    cache,
    run(args: readonly string[] = [], extraEnv: Record<string, string> = {}): Run {
      const r = spawnSync(process.execPath, [join(root, 'scripts/run.mjs'), 'src/entry.ts', ...args], { cwd: root, env: { ...env, ...extraEnv }, encoding: 'utf8' });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    runAsync(): Promise<Run> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [join(root, 'scripts/run.mjs'), 'src/entry.ts'], { cwd: root, env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    },
    /** The bundle directories in the cache (one per key). */
    bundles: () => readdirSync(cache).filter((n) => /^[0-9a-f]{16}-[0-9a-f]{24}$/.test(n)),
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

const output = (r: Run) => JSON.parse(r.stdout) as { value: string; yaml: string; argv: string[]; url: string; dirname: string };

describe('scripts/run.mjs', () => {
  let p: ReturnType<typeof project>;
  afterEach(() => p.dispose());

  it('runs the entry as a bundle with its own argv and import.meta, builds once, then hits', () => {
    // GIVEN a project never run before
    p = project();
    // WHEN it runs twice
    const first = p.run(['--flag', 'x']);
    const second = p.run(['--exit-3']);
    // THEN the first builds and the second reuses the bundle; the entry sees itself as the script
    expect(first.stderr).toBe('run.mjs: built (no cache entry)\n');
    expect(first.code).toBe(0);
    expect(output(first)).toEqual({
      value: 'one',
      yaml: 'a: 1\n',
      argv: [join(p.root, 'src/entry.ts'), '--flag', 'x'],
      url: pathToFileURL(join(p.root, 'src/entry.ts')).href,
      dirname: join(p.root, 'src'),
    });
    expect(second.stderr).toBe('run.mjs: hit\n');
    expect(second.code).toBe(3);
    expect(p.bundles()).toHaveLength(1);
  });

  it('KARPENTER_GITOPS_RUN_WHERE prints the bundle this checkout runs, building it, without running the entry', () => {
    p = project();
    const where = p.run([], { KARPENTER_GITOPS_RUN_WHERE: '1' });
    expect(where.code).toBe(0);
    expect(where.stdout).toBe(`${join(p.cache, p.bundles()[0]!, 'main.js')}\n`);
    expect(p.bundles()).toHaveLength(1);
    expect(output(p.run()).value).toBe('one'); // the next run hits that bundle
  });

  it('a source edit rebuilds, even one that keeps the size and the mtime', () => {
    // GIVEN a built project
    p = project();
    expect(p.run().stderr).toBe('run.mjs: built (no cache entry)\n');
    const lib = join(p.root, 'src/lib.ts');
    const { atime, mtime } = statSync(lib);
    // WHEN lib.ts changes to text of the same length and its mtime is put back
    writeFileSync(lib, `export const value = 'two';\n`);
    utimesSync(lib, atime, mtime);
    const r = p.run();
    // THEN the change is seen (ctime moved, content hash differs) and the new code runs
    expect(r.stderr).toBe('run.mjs: built (src/lib.ts changed)\n');
    expect(output(r).value).toBe('two');
  });

  it('touching a file without changing it is still a hit, and so is the run after', () => {
    p = project();
    p.run();
    const lib = join(p.root, 'src/lib.ts');
    writeFileSync(lib, readFileSync(lib));
    expect(p.run().stderr).toBe('run.mjs: hit\n');
    expect(p.run().stderr).toBe('run.mjs: hit\n');
  });

  it('a changed lockfile or a new file in the import graph rebuilds', () => {
    p = project();
    p.run();
    writeFileSync(join(p.root, 'package-lock.json'), JSON.stringify({ name: 'p', lockfileVersion: 3, packages: {} }));
    expect(p.run().stderr).toBe('run.mjs: built (package-lock.json changed)\n');
    writeFileSync(join(p.root, 'src/extra.ts'), `export const extra = 'three';\n`);
    writeFileSync(join(p.root, 'src/lib.ts'), `export { extra as value } from './extra.js';\n`);
    const r = p.run();
    expect(r.stderr).toBe('run.mjs: built (src/lib.ts changed)\n');
    expect(output(r).value).toBe('three');
  });

  it('a damaged bundle or cache index is rebuilt, not run', () => {
    // GIVEN a built project whose bundle is then overwritten
    p = project();
    p.run();
    const [bundle] = p.bundles();
    writeFileSync(join(p.cache, bundle!, 'main.js'), `throw new Error('damaged');\n`);
    // WHEN it runs
    const r = p.run();
    // THEN the damage is detected and a good bundle runs
    expect(r.stderr).toBe('run.mjs: built (bundle damaged: main.js changed)\n');
    expect(output(r).value).toBe('one');
    expect(p.run().stderr).toBe('run.mjs: hit\n');
    // AND an index that is not JSON is rebuilt too
    const index = readdirSync(p.cache).find((n) => n.endsWith('.json'))!;
    writeFileSync(join(p.cache, index), '{"key": ');
    const again = p.run();
    expect(again.stderr).toBe('run.mjs: built (cache index unreadable)\n');
    expect(output(again).value).toBe('one');
  });

  it('two first runs at once both succeed and leave one bundle, no temp directories', async () => {
    p = project();
    const [a, b] = await Promise.all([p.runAsync(), p.runAsync()]);
    for (const r of [a, b]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('run.mjs: built (no cache entry)\n');
      expect(output(r).value).toBe('one');
    }
    expect(p.bundles()).toHaveLength(1);
    expect(readdirSync(p.cache).filter((n) => n.startsWith('tmp-'))).toEqual([]);
    expect(p.run().stderr).toBe('run.mjs: hit\n');
  });

  it('falls back to tsx when the cache cannot be written', () => {
    p = project();
    writeFileSync(join(p.root, 'not-a-dir'), '');
    const r = p.run([], { KARPENTER_GITOPS_RUN_CACHE: join(p.root, 'not-a-dir', 'cache') });
    expect(r.stderr).toMatch(/^run\.mjs: fallback to tsx \(ENOTDIR: not a directory, mkdir '.*not-a-dir\/cache'\)\n$/);
    expect(r.code).toBe(0);
    expect(output(r).value).toBe('one');
  });

  it('a source that does not compile fails with esbuild\'s message and exit 1, not a stale bundle', () => {
    p = project();
    p.run();
    writeFileSync(join(p.root, 'src/lib.ts'), `export const value = ;\n`);
    const r = p.run();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`Build failed with 1 error:\nsrc/lib.ts:1:21: ERROR: Unexpected ";"\n`);
  });
});

describe('the synth bundle', () => {
  let repo: ReturnType<typeof tempRepo>;
  let cache: string;
  afterEach(() => {
    repo.dispose();
    rmSync(cache, { recursive: true, force: true });
  });

  it('writes what tsx writes, loads only the command line at start, then the synth without the AWS SDK, and the ApplicationSet import lazily', () => {
    // GIVEN the real synth entry, built into an empty cache
    repo = tempRepo();
    cache = mkdtempSync(join(REPO, 'node_modules', '.cache', 'run-test-'));
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), 'charts/main.ts', '--root', repo.root], {
      cwd: REPO,
      env: { ...process.env, KARPENTER_GITOPS_RUN_DEBUG: '1', KARPENTER_GITOPS_RUN_CACHE: cache },
      encoding: 'utf8',
    });
    // THEN the output is the committed one
    expect(r.status).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe('run.mjs: built (no cache entry)');
    expect(snapshotTree(join(repo.root, 'dist'))).toEqual(snapshotTree(join(REPO, 'dist')));
    expect(snapshotTree(join(repo.root, 'argocd'))).toEqual(snapshotTree(join(REPO, 'argocd')));

    // AND main.js loads at start (its static import closure) only what judges the command
    // line: no cdk8s, no AWS SDK, no ApplicationSet import. The synth itself is one lazy
    // chunk away, and its static closure has cdk8s but neither of the other two.
    const [bundle] = readdirSync(cache).filter((n) => !n.endsWith('.json'));
    const meta = JSON.parse(readFileSync(join(cache, bundle!, 'meta.json'), 'utf8')) as {
      outputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }>; inputs: Record<string, unknown> }>;
    };
    const closureOf = (entry: string) => {
      const files = new Set<string>();
      const visit = (file: string) => {
        if (files.has(file)) return;
        files.add(file);
        for (const i of meta.outputs[file]!.imports) if (!i.external && i.kind === 'import-statement') visit(i.path);
      };
      visit(entry);
      return files;
    };
    const inputsOf = (files: Set<string>) => [...files].flatMap((f) => [...Object.keys(meta.outputs[f]!.inputs), ...meta.outputs[f]!.imports.filter((i) => i.external).map((i) => i.path)]);
    const lazyFrom = (files: Set<string>) => [...files].flatMap((f) => meta.outputs[f]!.imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path));
    const atStart = closureOf('main.js');
    expect(inputsOf(atStart).filter((p) => p.includes('node_modules/cdk8s') || p.includes('@aws-sdk') || p.includes('imports/'))).toEqual([]);
    expect(inputsOf(atStart)).toContain('charts/cli.ts');
    const [command, ...others] = lazyFrom(atStart).filter((f) => Object.keys(meta.outputs[f]!.inputs).includes('charts/synth-command.ts'));
    expect(others).toEqual([]);
    const synthClosure = new Set([...atStart, ...closureOf(command!)]);
    const loaded = inputsOf(synthClosure);
    expect(loaded.filter((p) => p.includes('@aws-sdk') || p.includes('@smithy'))).toEqual([]);
    expect(loaded.filter((p) => p.includes('imports/applicationset-argoproj.io'))).toEqual([]);
    expect(loaded.some((p) => p.includes('node_modules/cdk8s/'))).toBe(true); // the check sees packages
    expect(lazyFrom(synthClosure).some((f) => Object.keys(meta.outputs[f]!.inputs).includes('imports/applicationset-argoproj.io.ts'))).toBe(true);
  });
});
