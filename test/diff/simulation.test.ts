/**
 * `npm run diff` when the simulation does not run: skipped with --no-simulate, or no binary
 * to be had. The unit project has no simulation binary, and these paths need none: where a
 * test must make the build fail, it points `ensureBinary` at a script that fails as
 * scripts/ensure-simulate.sh does without Go (a seam: the real script would find Go here).
 * The simulation itself, with the real binary, is tested in test/simulate/diff.test.ts.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../../config/environment.js';
import { main, runDiff, type Io } from '../../diff/cli.js';
import { ensureBinary } from '../../simulate/contract.js';
import { gitRepo } from './support.js';

let repo: ReturnType<typeof gitRepo> | undefined;
let scratch: string | undefined;
afterEach(() => {
  repo?.dispose();
  repo = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** Runs the CLI in-process, capturing what it prints; `binary` is the seam for scripts/ensure-simulate.sh. */
async function cli(args: string[], binary: () => string) {
  let stdout = '';
  let stderr = '';
  const io: Io = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ensureBinary: binary };
  const status = await main(['--root', repo!.root, '--base', 'main', '--env', 'prod', ...args], io);
  return { status, stdout, stderr };
}

const neverCalled = () => {
  throw new Error('the simulation binary was asked for');
};

/** A stand-in for scripts/ensure-simulate.sh on a machine without Go: says so on stderr and exits 1. */
function failingEnsureScript(): string {
  scratch = mkdtempSync(join(tmpdir(), 'diff-sim-'));
  const script = join(scratch, 'ensure-simulate.sh');
  writeFileSync(script, '#!/usr/bin/env bash\necho "ensure-simulate: Go is required to build the simulation (not on PATH, not in /usr/local/go/bin)" >&2\nexit 1\n');
  chmodSync(script, 0o755);
  return script;
}

const drifting = () => {
  repo = gitRepo();
  repo.editEnvironment('prod', (doc) => {
    doc.nodeClasses[0].tags = { team: 'payments' };
  });
};

describe('npm run diff --no-simulate', () => {
  it('GIVEN --no-simulate WHEN the CLI runs THEN the Markdown says the simulation was skipped, the binary is never asked for, the exit status is as before', async () => {
    drifting();
    const plain = await cli(['--no-simulate'], neverCalled);
    const strict = await cli(['--no-simulate', '--fail-on', 'drift'], neverCalled);
    expect([plain.status, strict.status]).toEqual([0, 1]);
    expect(plain.stderr).toBe('');
    expect(plain.stdout.split('\n').slice(2, 5)).toEqual(['**1 change replaces nodes** (Karpenter v1.13 drift): `prod/EC2NodeClass/default`.', '', '_What Karpenter would launch: not simulated (skipped with `--no-simulate`)._']);
    expect(plain.stdout).not.toContain('#### What Karpenter would launch');
  });

  it('GIVEN --fail-on pending with --no-simulate WHEN the CLI runs THEN it is refused: pending needs the simulation', async () => {
    drifting();
    await expect(cli(['--no-simulate', '--fail-on', 'pending'], neverCalled)).rejects.toThrow('--fail-on pending needs the simulation: it cannot be combined with --no-simulate');
  });
});

describe('npm run diff without a simulation binary', () => {
  it('GIVEN the binary cannot be built WHEN the CLI runs THEN the Markdown and stderr say why, and the exit status follows the drift review alone', async () => {
    drifting();
    const script = failingEnsureScript();
    const why = 'scripts/ensure-simulate.sh failed (exit 1); Go is needed to build the simulation';
    const plain = await cli([], () => ensureBinary(script));
    const strict = await cli(['--fail-on', 'drift'], () => ensureBinary(script));
    expect([plain.status, strict.status]).toEqual([0, 1]);
    expect(strict.stdout).toBe(plain.stdout);
    expect(plain.stdout.split('\n')[4]).toBe(`**Simulation not run: ${why}.** What Karpenter would launch is not shown; the review of drift below stands.`);
    expect(plain.stdout).toContain('| EC2NodeClass `default` | `spec.tags.team` | **all replaced** |');
    expect(plain.stdout).not.toContain('#### What Karpenter would launch');
    expect(plain.stderr).toBe(`warning: simulation not run: ${why}\n`);
  });

  it('GIVEN the binary cannot be built WHEN the CLI runs with --fail-on pending THEN it cannot answer: exit 2, saying so, after the Markdown', async () => {
    drifting();
    const script = failingEnsureScript();
    const out = await cli(['--fail-on', 'pending'], () => ensureBinary(script));
    expect(out.status).toBe(2);
    expect(out.stdout).toContain('**Simulation not run: scripts/ensure-simulate.sh failed (exit 1)');
    expect(out.stderr).toBe(
      'warning: simulation not run: scripts/ensure-simulate.sh failed (exit 1); Go is needed to build the simulation\nerror: --fail-on pending: cannot tell whether more pods stay pending, the simulation did not run\n',
    );
  });

  it('GIVEN no environment whose manifests change WHEN diffed THEN nothing is simulated: the binary is never asked for', () => {
    repo = gitRepo();
    const result = runDiff({ root: repo.root, base: 'main', simulate: { run: true, binary: neverCalled } });
    expect(result.simulation).toEqual({ status: 'ran', environments: new Map() });
    expect(result.markdown).toContain('An environment whose manifests, zones and DaemonSets do not change launches the same and is not simulated.');
    expect(result.markdown).not.toContain('#### What Karpenter would launch');
  });

  it('GIVEN the change removes an environment WHEN diffed THEN it says nothing launches there afterwards, without a binary', () => {
    repo = gitRepo();
    rmSync(join(repo.root, 'environments', 'dev.yaml'));
    const result = runDiff({ root: repo.root, base: 'main', env: 'dev', simulate: { run: true, binary: neverCalled } });
    expect(result.simulation).toEqual({ status: 'ran', environments: new Map([['dev', { status: 'removed' }]]) });
    expect(result.markdown).toContain('#### What Karpenter would launch\n\nNothing: the change removes this environment.\n');
  });

  it('GIVEN no catalogue for the region WHEN the CLI runs THEN the environment says why it was not simulated, on stderr too; --fail-on pending cannot tell', async () => {
    drifting();
    rmSync(join(repo!.root, 'catalogue', 'us-east-1.json'));
    const plain = await cli([], neverCalled);
    const pending = await cli(['--fail-on', 'pending'], neverCalled);
    expect([plain.status, pending.status]).toEqual([0, 2]);
    const why = 'no instance catalogue: catalogue/us-east-1.json: (top level): cannot be read as JSON: ';
    expect(plain.stdout).toContain(`#### What Karpenter would launch\n\nNot simulated: ${why}`);
    expect(plain.stderr).toMatch(new RegExp(`^warning: prod: not simulated: ${why.replace(/[.()]/g, '\\$&')}ENOENT[^\n]*\n$`));
    expect(pending.stderr.split('\n').slice(1)).toEqual(['error: --fail-on pending: cannot tell whether more pods stay pending, some simulations did not run', '']);
  });
});

describe('npm run diff: the base judged with its own environment file', () => {
  it("GIVEN prod's environment file does not parse at the base WHEN diffed THEN a note says the base is judged with today's file, and the review still runs", () => {
    repo = gitRepo();
    repo.git('checkout', '-q', 'main');
    const broken = 'cluster: [not, a, map]\n';
    writeFileSync(join(repo.root, 'environments/prod.yaml'), broken);
    repo.git('commit', '-q', '-am', 'prod.yaml broken at the base');
    const baseCommit = repo.git('rev-parse', 'HEAD').trim();
    repo.git('checkout', '-q', 'feature');
    expect(readFileSync(join(repo.root, 'environments/prod.yaml'), 'utf8')).not.toBe(broken);
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    let result: ReturnType<typeof runDiff>;
    try {
      result = runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: { run: false, why: 'test' } });
    } finally {
      spy.mockRestore();
    }
    let why = '';
    try {
      parseEnvironment('environments/prod.yaml', broken);
    } catch (err) {
      why = (err as Error).message.split('\n')[0]!;
    }
    expect(why).not.toBe('');
    expect(written).toEqual([`note: environments/prod.yaml at ${baseCommit.slice(0, 12)} does not parse with today's schema, so the base is judged with today's file: ${why}\n`]);
    expect(result!.reviews.map((r) => r.status)).toEqual(['unchanged']);
    // With a `note` of its own (the CLI passes its stderr), the note goes there and nowhere else.
    const noted: string[] = [];
    const quiet = vi.spyOn(process.stderr, 'write').mockImplementation(() => {
      throw new Error('written to process.stderr');
    });
    try {
      runDiff({ root: repo.root, base: 'main', env: 'prod', simulate: { run: false, why: 'test' }, note: (line) => noted.push(line) });
    } finally {
      quiet.mockRestore();
    }
    expect(noted).toEqual(written);
  });
});
