import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkout, errorLines, generatedState, leftovers, synthCli, synthCliAsync, synthInProcess, until, type GeneratedState } from '../support/generated.js';

/**
 * `npm run synth` writing its output (issue 9 §1), through the real command: failures while
 * writing or swapping, crashes, two runs at once, a stale lock. Every step of the commit is
 * killed in test/config/atomic.test.ts; here the real CLI is killed at the steps that
 * matter and the next run of the CLI has to repair.
 */

/** A valid change to dev: its NodePool (dist/) and its Application's Helm values (argocd/) change. */
function change(repo: ReturnType<typeof checkout>): void {
  repo.editEnvironment('dev', (e) => {
    e.karpenter.replicas = 2;
    e.nodePools[0].expireAfter = '240h';
  });
}

/** Step numbers of the commit in a full synth (see STEPS in test/config/atomic.test.ts). */
const STEP = { stagedDist: 2, journalWritten: 6, installedDist: 8, installedArgocd: 10, journalRemoved: 15 } as const;

let OLD: GeneratedState;
let NEW: GeneratedState;

beforeAll(async () => {
  const repo = checkout();
  try {
    OLD = generatedState(repo.root);
    change(repo);
    const r = await synthInProcess(repo.root);
    expect(r.status, r.stderr).toBe(0);
    NEW = generatedState(repo.root);
    expect(NEW.dist).not.toEqual(OLD.dist);
    expect(NEW.argocd).not.toEqual(OLD.argocd);
  } finally {
    repo.dispose();
  }
});

describe('a failure while writing leaves the old output complete: exit 1, one line, no temp file', () => {
  let repo: ReturnType<typeof checkout> | undefined;
  afterEach(() => {
    if (repo) execFileSync('chattr', ['-R', '-i', repo.root]);
    repo?.dispose();
  });

  it.each([
    ['no space left while staging argocd/ (simulated)', (_root: string) => ({ KARPENTER_GITOPS_FAULT: 'throw:ENOSPC@3' }), 'error: cannot write argocd/: no space left on device (ENOSPC); nothing was changed\n'],
    ['no space left mid-swap, dist/ already new (simulated)', () => ({ KARPENTER_GITOPS_FAULT: `throw:ENOSPC@${STEP.installedDist}` }), 'error: cannot write dist/: no space left on device (ENOSPC); nothing was changed\n'],
    [
      'an immutable argocd/ (chattr +i)',
      (root: string) => {
        execFileSync('chattr', ['+i', join(root, 'argocd')]);
        return {};
      },
      'error: cannot write argocd/: operation not permitted (EPERM on argocd); nothing was changed\n',
    ],
    [
      'an immutable environments/ (chattr +i)',
      (root: string) => {
        execFileSync('chattr', ['+i', join(root, 'environments')]);
        return {};
      },
      'error: cannot write environments/schema.json: operation not permitted (EPERM on environments/schema.json); nothing was changed\n',
    ],
    [
      'a directory where environments/schema.json should be',
      (root: string) => {
        execFileSync('rm', [join(root, 'environments/schema.json')]);
        mkdirSync(join(root, 'environments/schema.json'));
        return {};
      },
      'error: cannot write environments/schema.json: it is a directory, not a regular file; move it away and run again; nothing was changed\n',
    ],
    [
      'a file where dist/ should be',
      (root: string) => {
        execFileSync('rm', ['-r', join(root, 'dist')]);
        writeFileSync(join(root, 'dist'), 'not a directory\n');
        return {};
      },
      'error: cannot write dist/: it is a regular file, not a directory; move it away and run again; nothing was changed\n',
    ],
  ])('GIVEN %s', async (_what, setup, stderr) => {
    repo = checkout();
    change(repo);
    const env = setup(repo.root);
    const before = generatedState(repo.root);
    const r = await synthInProcess(repo.root, [], env);
    expect(r.stderr).toBe(stderr);
    expect(r.status).toBe(1);
    expect(generatedState(repo.root)).toEqual(before);
    expect(leftovers(repo.root)).toEqual([]);
  });

  it('GIVEN a bug of the program (simulated) THEN exit 2 with "internal error, please report" above the stack', () => {
    repo = checkout();
    change(repo);
    // A real process: exit 2 is the process's status, and the stack is what a user would paste.
    const r = synthCli(repo.root, [], { KARPENTER_GITOPS_FAULT: 'throw:BUG@1' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^error: internal error, please report it with the lines below\nError: BUG: simulated failure after "lock taken"\n {4}at /);
    const { environments: _e, ...after } = generatedState(repo.root);
    const { environments: _o, ...old } = OLD;
    expect(after).toEqual(old);
    expect(leftovers(repo.root)).toEqual([]);
  });
});

describe('synth killed mid-commit: the next run of synth repairs first', () => {
  let repo: ReturnType<typeof checkout> | undefined;
  afterEach(() => repo?.dispose());

  it.each(Object.entries(STEP))('GIVEN a SIGKILL after %s THEN the next (failing) run finds complete old or new output and leaves nothing', async (_name, n) => {
    repo = checkout();
    change(repo);
    const killed = synthCli(repo.root, [], { KARPENTER_GITOPS_FAULT: `kill@${n}` });
    expect(killed.signal).toBe('SIGKILL');
    // The next run has bad input: it must repair, then refuse, and leave exactly old or new.
    repo.editEnvironment('staging', (e) => (e.nodePools[0].expireAfter = '1x'));
    const next = await synthInProcess(repo.root);
    expect(next.status).toBe(1);
    expect(errorLines(next.stderr)[0]).toBe(`note: removed the lock of run ${killed.pid}, which no longer exists`);
    expect(errorLines(next.stderr).slice(-2)).toEqual([
      'error: invalid input, nothing was written',
      'environments/staging.yaml: nodePools[0].expireAfter: must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never, got "1x"',
    ]);
    const { environments: _e, ...after } = generatedState(repo.root);
    const { environments: _o, ...old } = OLD;
    const { environments: _n, ...fresh } = NEW;
    expect(after).toEqual(n < STEP.journalWritten ? old : fresh);
    expect(leftovers(repo.root)).toEqual([]);
  }, 300_000);
});

describe('two synths at once', () => {
  let repo: ReturnType<typeof checkout> | undefined;
  afterEach(() => repo?.dispose());

  it('GIVEN one run holding the lock mid-swap THEN the second waits with a message, and both finish with the complete new output', async () => {
    repo = checkout();
    change(repo);
    const go = join(repo.root, 'environments', 'go');
    const first = synthCliAsync(repo.root, { KARPENTER_GITOPS_FAULT: `pause:${go}@${STEP.installedDist}` });
    await until(() => existsSync(`${go}.ready`));
    const second = synthCliAsync(repo.root);
    await until(() => second.stderr().includes(`waiting: another run (pid ${first.child.pid}) is writing generated output\n`));
    writeFileSync(go, '');
    const [a, b] = await Promise.all([first.done, second.done]);
    execFileSync('rm', [go, `${go}.ready`]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/^synthesized dev \(4 objects\), prod \(8 objects\), staging \(9 objects\) into dist\//);
    expect(generatedState(repo.root)).toEqual(NEW);
    expect(leftovers(repo.root)).toEqual([]);
  }, 300_000);

  it('GIVEN a lock left by a run that no longer exists THEN synth says so, breaks it and writes', async () => {
    repo = checkout();
    change(repo);
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(join(repo.root, '.synth.lock'), `${gone}\n`);
    const r = await synthInProcess(repo.root);
    expect(r.status, r.stderr).toBe(0);
    expect(errorLines(r.stderr)).toEqual([`note: removed the lock of run ${gone}, which no longer exists`]);
    expect(generatedState(repo.root)).toEqual(NEW);
    expect(leftovers(repo.root)).toEqual([]);
  });
});
