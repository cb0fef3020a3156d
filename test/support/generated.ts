import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO, snapshotTree, tempRepo } from './repo.js';
import { runSynth } from '../../charts/cli.js';

/** What synth writes, plus the inputs a failed run must not touch: compared byte for byte. */
export interface GeneratedState {
  readonly dist: Record<string, string> | 'absent';
  readonly argocd: Record<string, string> | 'absent';
  readonly reports: Record<string, string> | 'absent';
  readonly schema: string | 'absent';
  readonly outputs: Record<string, string>;
  readonly environments: Record<string, string>;
}

export function generatedState(root: string): GeneratedState {
  const tree = (dir: string) => {
    const path = join(root, dir);
    if (!existsSync(path)) return 'absent';
    // A test may have put a file where the directory goes: its content stands for the tree.
    return lstatSync(path).isDirectory() ? snapshotTree(path) : { '(not a directory)': readFileSync(path, 'utf8') };
  };
  const schema = join(root, 'environments/schema.json');
  return {
    dist: tree('dist'),
    argocd: tree('argocd'),
    reports: tree('reports'),
    schema: existsSync(schema) && lstatSync(schema).isFile() ? readFileSync(schema, 'utf8') : 'absent',
    outputs: regularFiles(join(root, 'infra/outputs')),
    environments: regularFiles(join(root, 'environments')),
  };
}

/** Regular files of one directory (a test may have put a FIFO there: never read it). */
function regularFiles(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => lstatSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );
}

/** Every path under root whose name is a temp, lock or journal name of synth or of writeFileAtomic. */
export function leftovers(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (/^\.synth\.|\.tmp|^\.(dist|argocd)\b/.test(name)) out.push(relative(root, p));
      else if (lstatSync(p).isDirectory() && name !== 'crds') walk(p);
    }
  };
  walk(root);
  return out.sort();
}

/** A temp repository with the committed dist/, argocd/ and environments/schema.json: a user's checkout. */
export function checkout() {
  const repo = tempRepo({ withDist: true });
  cpSync(join(REPO, 'argocd'), join(repo.root, 'argocd'), { recursive: true });
  cpSync(join(REPO, 'reports'), join(repo.root, 'reports'), { recursive: true });
  return repo;
}

/** The real entry point of `npm run synth`, as a user runs it. */
export function synthCli(root: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'charts/main.ts'), '--root', root, ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
}

/**
 * The same command, run in this process (charts/cli.ts `runSynth`, which charts/main.ts
 * runs for npm): the same code from the command line on, without a second of Node start-up
 * per run. Output is captured; `env` is what the command reads (CDK8S_OUTDIR, a `throw:`
 * fault). Faults that kill or pause the process need synthCli.
 */
export async function synthInProcess(root: string, args: readonly string[] = [], env: Readonly<Record<string, string>> = {}, cwd = REPO): Promise<{ status: number; stdout: string; stderr: string }> {
  const fault = env.KARPENTER_GITOPS_FAULT;
  if (fault !== undefined && !/^throw:[A-Z]+@\d+$/.test(fault)) throw new Error(`synthInProcess: KARPENTER_GITOPS_FAULT=${fault} may kill, pause or write to this process; use synthCli`);
  let stdout = '';
  let stderr = '';
  const status = await runSynth(['--root', root, ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: { ...process.env, KARPENTER_GITOPS_FAULT: undefined, ...env },
    cwd,
  });
  return { status, stdout, stderr };
}

/** The same, started in the background; resolves when it exits. */
export function synthCliAsync(root: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'charts/main.ts'), '--root', root], { cwd: REPO, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((ok) =>
    child.on('close', (code, signal) => ok({ code, signal, stdout, stderr })),
  );
  return { child, done, stderr: () => stderr };
}

/** Waits until `check` holds (polling), failing after `ms`. */
export async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Lines of stderr without the warnings every full synth of the shipped environments prints. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '));
}
