import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitError, commit, faultHookFromEnv, recoverCommit, LOCK_FILE, TXN_DIR } from '../../config/atomic.js';
import { REPO, snapshotTree } from '../support/repo.js';

/**
 * The commit of generated output (config/atomic.ts): all or nothing under failures, crashes
 * at every step (real SIGKILLs of a child process), crashes during the repair, and locks.
 */

type Tree = Record<string, string>;
interface State {
  readonly dist: Tree | 'absent';
  readonly argocd: Tree | 'absent';
  readonly schema: string | 'absent';
}

const OLD: State = { dist: { 'dev/a.yaml': 'old a\n', 'dev/stale.yaml': 'stale\n' }, argocd: { 'x.yaml': 'old x\n' }, schema: 'old schema\n' };
const NEW: State = { dist: { 'dev/a.yaml': 'new a\n', 'prod/b.yaml': 'new b\n' }, argocd: { 'x.yaml': 'new x\n', 'sub/y.yaml': 'new y\n' }, schema: 'new schema\n' };
const PLAN = { trees: { dist: NEW.dist, argocd: NEW.argocd }, files: { 'environments/schema.json': NEW.schema as string } };
const STEPS = [
  'lock taken',
  'staged dist/',
  'staged argocd/',
  'staged environments/schema.json',
  'journal written',
  'moved aside dist/',
  'installed dist/',
  'moved aside argocd/',
  'installed argocd/',
  'moved aside environments/schema.json',
  'installed environments/schema.json',
  'journal removed',
];
const JOURNAL_STEP = STEPS.indexOf('journal written') + 1;

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) execFileSync('sh', ['-c', 'chattr -R -i "$1" 2>/dev/null; rm -rf "$1"', 'sh', root]);
});

function repoWith(state: State): string {
  const root = mkdtempSync(join(tmpdir(), 'atomic-'));
  roots.push(root);
  mkdirSync(join(root, 'environments'));
  writeFileSync(join(root, 'environments/dev.yaml'), 'source: untouched\n');
  const write = (dir: string, tree: Tree | 'absent') => {
    if (tree === 'absent') return;
    for (const [rel, text] of Object.entries(tree)) {
      mkdirSync(dirname(join(root, dir, rel)), { recursive: true });
      writeFileSync(join(root, dir, rel), text);
    }
  };
  write('dist', state.dist);
  write('argocd', state.argocd);
  if (state.schema !== 'absent') writeFileSync(join(root, 'environments/schema.json'), state.schema);
  return root;
}

function stateOf(root: string): State {
  const tree = (dir: string) => (existsSync(join(root, dir)) ? snapshotTree(join(root, dir)) : 'absent');
  const schema = join(root, 'environments/schema.json');
  return { dist: tree('dist'), argocd: tree('argocd'), schema: existsSync(schema) ? readFileSync(schema, 'utf8') : 'absent' };
}

/** Only the targets and the source file: no lock, no journal, no staging area. */
function expectClean(root: string): void {
  expect(readdirSync(root).sort()).toEqual(['argocd', 'dist', 'environments']);
  expect(readdirSync(join(root, 'environments')).sort()).toEqual(['dev.yaml', 'schema.json']);
  expect(readFileSync(join(root, 'environments/dev.yaml'), 'utf8')).toBe('source: untouched\n');
}

function planFor(root: string) {
  return {
    trees: new Map(Object.entries(PLAN.trees).map(([d, t]) => [join(root, d), new Map(Object.entries(t))])),
    files: new Map(Object.entries(PLAN.files).map(([f, t]) => [join(root, f), t])),
  };
}

function child(mode: 'commit' | 'recover', root: string, fault?: string) {
  const args = [join(REPO, 'scripts/run.mjs'), join(REPO, 'test/support/atomic-child.ts'), mode, root, ...(mode === 'commit' ? [JSON.stringify(PLAN)] : [])];
  return spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8', env: { ...process.env, KARPENTER_GITOPS_FAULT: fault ?? '' } });
}

/** In-process hook that throws an fs-like error with `code` at the given calls. */
function throwAt(code: string, ...at: number[]) {
  let n = 0;
  const seen: string[] = [];
  return {
    seen,
    hook: (step: string) => {
      n += 1;
      seen.push(step);
      if (at.includes(n)) throw Object.assign(new Error(`${code}: simulated`), { code });
    },
  };
}

describe('commit', () => {
  it('GIVEN old output WHEN committed THEN every tree and file is the new one, stale files are gone, nothing else is left', () => {
    const root = repoWith(OLD);
    const { hook, seen } = throwAt('ENONE');
    commit(planFor(root), { root, faultHook: hook });
    expect(stateOf(root)).toEqual(NEW);
    expect(seen).toEqual(STEPS);
    expectClean(root);
  });

  it('GIVEN no output yet WHEN committed THEN it is created', () => {
    const root = repoWith({ dist: 'absent', argocd: 'absent', schema: 'absent' });
    commit(planFor(root), { root });
    expect(stateOf(root)).toEqual(NEW);
    expectClean(root);
  });

  it.each(STEPS.slice(0, -1).map((s, i) => [i + 1, s] as const))(
    'GIVEN ENOSPC after step %i (%s) THEN CommitError, the old output complete, nothing left',
    (n) => {
      const root = repoWith(OLD);
      const { hook } = throwAt('ENOSPC', n);
      expect(() => commit(planFor(root), { root, faultHook: hook })).toThrow(CommitError);
      expect(stateOf(root)).toEqual(OLD);
      expectClean(root);
    },
  );

  it('GIVEN a failure after the last step (tidying) THEN the commit stands', () => {
    const root = repoWith(OLD);
    commit(planFor(root), { root, faultHook: throwAt('EIO', STEPS.length).hook });
    expect(stateOf(root)).toEqual(NEW);
    expectClean(root);
  });

  it('GIVEN the failure names a target THEN the message is one line naming it', () => {
    const root = repoWith(OLD);
    expect(() => commit(planFor(root), { root, faultHook: throwAt('ENOSPC', 3).hook })).toThrow(
      new CommitError('cannot write argocd/: no space left on device (ENOSPC); nothing was changed'),
    );
    expect(() => commit(planFor(root), { root, faultHook: throwAt('EPERM', STEPS.indexOf('installed dist/') + 1).hook })).toThrow(
      new CommitError('cannot write dist/: operation not permitted (EPERM); nothing was changed'),
    );
  });

  it.each([1, 2, 3, 4, 5].map((k) => [k] as const))(
    'GIVEN a swap that fails AND the undo fails at its step %i THEN the error says so and the next run restores the old output',
    (k) => {
      const root = repoWith(OLD);
      const failAt = STEPS.indexOf('moved aside argocd/') + 1;
      const { hook } = throwAt('EIO', failAt, failAt + k);
      let message = '';
      try {
        commit(planFor(root), { root, faultHook: hook });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^cannot write argocd\/: input\/output error \(EIO\)(; nothing was changed|, and undoing the partial swap failed too \(input\/output error \(EIO\)\); the next run finishes the undo)$/);
      recoverCommit(root);
      expect(stateOf(root)).toEqual(OLD);
      expectClean(root);
    },
  );

  it('GIVEN an immutable argocd/ (chattr +i) THEN dist/ is swapped back and the error is one line', () => {
    const root = repoWith(OLD);
    execFileSync('chattr', ['+i', join(root, 'argocd')]);
    expect(() => commit(planFor(root), { root })).toThrow(new CommitError('cannot write argocd/: operation not permitted (EPERM on argocd); nothing was changed'));
    execFileSync('chattr', ['-i', join(root, 'argocd')]);
    expect(stateOf(root)).toEqual(OLD);
    expectClean(root);
  });

  it('GIVEN a directory where environments/schema.json should be THEN refused before anything moves', () => {
    const root = repoWith({ ...OLD, schema: 'absent' });
    mkdirSync(join(root, 'environments/schema.json'));
    writeFileSync(join(root, 'environments/schema.json/keep'), 'mine\n');
    expect(() => commit(planFor(root), { root })).toThrow(
      new CommitError('cannot write environments/schema.json: it is a directory, not a regular file; move it away and run again; nothing was changed'),
    );
    expect(snapshotTree(join(root, 'dist'))).toEqual(OLD.dist);
    expect(readFileSync(join(root, 'environments/schema.json/keep'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(root, TXN_DIR)) || existsSync(join(root, LOCK_FILE))).toBe(false);
  });

  it('GIVEN a symlink where dist/ should be THEN refused', () => {
    const root = repoWith({ ...OLD, dist: 'absent' });
    execFileSync('ln', ['-s', 'environments', join(root, 'dist')]);
    expect(() => commit(planFor(root), { root })).toThrow(new CommitError('cannot write dist/: it is a symbolic link, not a directory; move it away and run again; nothing was changed'));
  });

  it('GIVEN a target outside the root, the root itself, or one target inside another THEN refused', () => {
    const root = repoWith(OLD);
    expect(() => commit({ files: new Map([[join(root, '..', 'x'), 'x']]) }, { root })).toThrow(/^refusing to write .*: generated output must be inside/);
    expect(() => commit({ trees: new Map([[root, new Map()]]) }, { root })).toThrow(/^refusing to write/);
    expect(() => commit({ trees: new Map([[join(root, 'dist'), new Map()], [join(root, 'dist/dev'), new Map()]]) }, { root })).toThrow(
      new CommitError('cannot write dist/dev/: it is inside dist/, which is written in the same commit'),
    );
    expect(stateOf(root)).toEqual(OLD);
  });
});

describe('commit: output that did not change', () => {
  it('GIVEN the output already equal to the plan WHEN committed THEN only the lock is taken: nothing is staged, swapped or rewritten', () => {
    const root = repoWith(NEW);
    const before = statSync(join(root, 'dist/dev/a.yaml'));
    const { hook, seen } = throwAt('ENONE');
    commit(planFor(root), { root, faultHook: hook });
    expect(seen).toEqual(['lock taken']);
    expect(stateOf(root)).toEqual(NEW);
    expect(statSync(join(root, 'dist/dev/a.yaml')).ino).toBe(before.ino);
    expectClean(root);
  });

  it('GIVEN one file of a tree changed WHEN committed THEN the unchanged files of that tree are the same files (linked, not rewritten) and the changed one is new', () => {
    const root = repoWith({ ...NEW, dist: { ...(NEW.dist as Tree), 'dev/a.yaml': 'edited by hand\n' } });
    const kept = statSync(join(root, 'dist/prod/b.yaml')).ino;
    const edited = statSync(join(root, 'dist/dev/a.yaml')).ino;
    const { hook, seen } = throwAt('ENONE');
    commit(planFor(root), { root, faultHook: hook });
    expect(seen).toEqual(STEPS);
    expect(stateOf(root)).toEqual(NEW);
    expect(statSync(join(root, 'dist/prod/b.yaml')).ino).toBe(kept);
    expect(statSync(join(root, 'dist/dev/a.yaml')).ino).not.toBe(edited);
    expectClean(root);
  });

  it.each([
    ['a symbolic link where a file belongs', (root: string) => symlinkSync('a.yaml', join(root, 'dist/dev/link.yaml'))],
    ['an extra empty directory', (root: string) => mkdirSync(join(root, 'dist/empty'))],
    ['an extra file', (root: string) => writeFileSync(join(root, 'argocd/extra.yaml'), 'x\n')],
    ['a FIFO beside the files', (root: string) => execFileSync('mkfifo', [join(root, 'argocd/pipe.yaml')])],
  ])('GIVEN output equal to the plan except for %s WHEN committed THEN it is replaced by the plan', (_what, spoil) => {
    const root = repoWith(NEW);
    spoil(root);
    const { hook, seen } = throwAt('ENONE');
    commit(planFor(root), { root, faultHook: hook });
    expect(seen).toEqual(STEPS);
    expect(stateOf(root)).toEqual(NEW);
    expect(readdirSync(join(root, 'dist')).sort()).toEqual(['dev', 'prod']);
    expectClean(root);
  });
});

describe('commit killed (SIGKILL) at every step, then any next run', () => {
  it('GIVEN the trace THEN the steps are the documented ones', () => {
    const root = repoWith(OLD);
    const r = child('commit', root, 'trace');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual(STEPS.map((s, i) => `fault-step ${i + 1} ${s}`));
  });

  it.each(STEPS.map((s, i) => [i + 1, s] as const))('GIVEN a kill after step %i (%s) THEN the next run finds complete old or new output and leaves nothing', (n) => {
    const root = repoWith(OLD);
    const killed = child('commit', root, `kill@${n}`);
    expect(killed.signal).toBe('SIGKILL');
    // The next run (in-process here; charts/cli.test.ts does it through the real CLI).
    const notes: string[] = [];
    recoverCommit(root, { onRepair: (note) => notes.push(note) });
    expect(stateOf(root)).toEqual(n < JOURNAL_STEP ? OLD : NEW);
    expect(notes[0]).toBe(`removed the lock of run ${killed.pid}, which no longer exists`);
    expectClean(root);
  });

  it.each([[STEPS.indexOf('installed dist/') + 1, 'installed dist/'] as const])(
    'GIVEN a kill after step %i (%s) AND the repair killed at each of its steps THEN a further run still finishes the new output',
    (n) => {
      for (let m = 1; ; m += 1) {
        const root = repoWith(OLD);
        expect(child('commit', root, `kill@${n}`).signal).toBe('SIGKILL');
        const repair = child('recover', root, `kill@${m}`);
        if (repair.signal !== 'SIGKILL') {
          expect(repair.status, repair.stderr).toBe(0); // the repair had fewer than m steps
          expect(stateOf(root)).toEqual(NEW);
          break;
        }
        recoverCommit(root);
        expect(stateOf(root)).toEqual(NEW);
        expectClean(root);
      }
    },
    300_000,
  );

  it('GIVEN a kill mid-swap AND the cause of a failure still there at repair (immutable argocd/) THEN the repair restores the old output', () => {
    const root = repoWith(OLD);
    expect(child('commit', root, `kill@${STEPS.indexOf('installed dist/') + 1}`).signal).toBe('SIGKILL');
    execFileSync('chattr', ['+i', join(root, 'argocd')]);
    const repair = child('recover', root);
    execFileSync('chattr', ['-i', join(root, 'argocd')]);
    expect(repair.stderr).toContain('note: undid the partial swap of an interrupted run: dist/, argocd/, environments/schema.json are as they were before it');
    expect(stateOf(root)).toEqual(OLD);
    expectClean(root);
  });
});

describe('a journal that is not one', () => {
  it('GIVEN garbage in .synth.txn/journal.json THEN the repair refuses with one line and touches nothing', () => {
    const root = repoWith(OLD);
    mkdirSync(join(root, TXN_DIR));
    writeFileSync(join(root, TXN_DIR, 'journal.json'), '{"version": 2');
    expect(() => recoverCommit(root)).toThrow(new CommitError('.synth.txn/journal.json is not a journal this version understands; check the output, then remove .synth.txn/'));
    expect(stateOf(root)).toEqual(OLD);
    expect(existsSync(join(root, LOCK_FILE))).toBe(false);
  });
});

describe('the write lock', () => {
  it('GIVEN a lock held by a live process THEN a commit waits, says so, and gives up after the timeout with one line', () => {
    const root = repoWith(OLD);
    const holder = spawn('sleep', ['30']);
    try {
      writeFileSync(join(root, LOCK_FILE), `${holder.pid}\n`);
      const waited: number[] = [];
      expect(() => commit(planFor(root), { root, lockTimeoutMs: 1000, onWait: (pid) => waited.push(pid) })).toThrow(
        new CommitError(`another run (pid ${holder.pid}) has been writing generated output for 1 s; if it is gone, remove ${LOCK_FILE} and run again`),
      );
      expect(waited).toEqual([holder.pid]);
      expect(stateOf(root)).toEqual(OLD);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('GIVEN a lock of a process that no longer exists THEN it is broken and the commit goes through', () => {
    const root = repoWith(OLD);
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(join(root, LOCK_FILE), `${gone}\n`);
    writeFileSync(join(root, `${LOCK_FILE}.${gone}`), `${gone}\n`);
    const notes: string[] = [];
    commit(planFor(root), { root, onRepair: (n) => notes.push(n) });
    expect(notes).toEqual([`removed the lock of run ${gone}, which no longer exists`]);
    expect(stateOf(root)).toEqual(NEW);
    expectClean(root);
  });

  it('GIVEN two real processes committing at once THEN the second waits for the first and both complete', async () => {
    const root = repoWith(OLD);
    const go = join(root, '..', `${root.split('/').pop()}-go`);
    roots.push(go, `${go}.ready`);
    const first = spawn(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'test/support/atomic-child.ts'), 'commit', root, JSON.stringify(PLAN)], {
      cwd: REPO,
      env: { ...process.env, KARPENTER_GITOPS_FAULT: `pause:${go}@${STEPS.indexOf('installed dist/') + 1}` },
    });
    const firstDone = new Promise<number | null>((ok) => first.on('close', ok));
    while (!existsSync(`${go}.ready`)) await new Promise((r) => setTimeout(r, 20));
    // The first holds the lock with dist/ new and argocd/ old: the second must not see or touch that.
    const second = spawn(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'test/support/atomic-child.ts'), 'commit', root, JSON.stringify(PLAN)], { cwd: REPO });
    let secondErr = '';
    second.stderr.on('data', (d) => (secondErr += d));
    const secondDone = new Promise<number | null>((ok) => second.on('close', ok));
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(join(root, TXN_DIR, 'journal.json'))).toBe(true);
    writeFileSync(go, '');
    expect(await firstDone).toBe(0);
    expect(await secondDone).toBe(0);
    expect(secondErr).toBe('');
    expect(stateOf(root)).toEqual(NEW);
    expectClean(root);
  }, 300_000);
});

describe('.gitignore', () => {
  it.each([`${LOCK_FILE}`, `${LOCK_FILE}.4242`, `${LOCK_FILE}.stale.4242`, `${TXN_DIR}/journal.json`, `${TXN_DIR}/new/0/dev/x.k8s.yaml`, '.cdk8s.out/dev/x.k8s.yaml', 'environments/.schema.json.4242.tmp', 'infra/outputs/.dev.json.4242.tmp', '.dist.tmp-abc', '.argocd.tmp-abc.old'])(
    'covers the temp name %s, so a crash never leaves something to commit by mistake',
    (name) => {
      expect(spawnSync('git', ['check-ignore', '--no-index', '-q', name], { cwd: REPO }).status).toBe(0);
    },
  );

  it('does not ignore what synth generates', () => {
    for (const name of ['dist/dev/NodePool.default.k8s.yaml', 'argocd/AppProject.karpenter-gitops.k8s.yaml', 'environments/schema.json']) {
      expect(spawnSync('git', ['check-ignore', '--no-index', '-q', name], { cwd: REPO }).status).toBe(1);
    }
  });
});

describe('faultHookFromEnv', () => {
  it('parses the test-only variable and refuses anything else', () => {
    expect(faultHookFromEnv(undefined)).toBeUndefined();
    expect(faultHookFromEnv('')).toBeUndefined();
    expect(() => faultHookFromEnv('boom@1')).toThrow('KARPENTER_GITOPS_FAULT: cannot parse "boom@1"');
    // A pause file may contain anything; the step number is what follows the last @.
    let ready = '';
    const dir = mkdtempSync(join(tmpdir(), 'fault-'));
    roots.push(dir);
    writeFileSync(join(dir, 'go@x'), '');
    const pause = faultHookFromEnv(`pause:${join(dir, 'go@x')}@2`)!;
    pause('one');
    expect(existsSync(join(dir, 'go@x.ready'))).toBe(false);
    pause('two');
    ready = readFileSync(join(dir, 'go@x.ready'), 'utf8');
    expect(ready).toBe('two');
    const hook = faultHookFromEnv('throw:ENOSPC@2')!;
    hook('one');
    expect(() => hook('two')).toThrow('ENOSPC: simulated failure after "two"');
    hook('three');
  });
});
