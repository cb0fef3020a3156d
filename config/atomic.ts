import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Atomic writes of generated output. dist/, argocd/, environments/schema.json (and any
 * generated file added later) are read by Argo CD, by reviewers and by the next run; a
 * crash, a full disk, an immutable directory or a second run at the same moment must
 * never leave them half old and half new.
 *
 * Design: one transaction per run, rolled forward or back by a journal.
 *
 *   <root>/.synth.lock       who writes: the PID of the run in its write phase. Created with
 *                            link(2), which is atomic and fails if the file exists, so two
 *                            runs never both hold it; a lock whose PID no longer runs
 *                            (a killed run) is stale and is broken by the next run.
 *   <root>/.synth.txn/new/i  entry i, complete, staged beside the targets (same file
 *                            system, so the swap is rename(2) only);
 *   <root>/.synth.txn/old/i  the previous content of entry i, once moved aside;
 *   <root>/.synth.txn/journal.json  the targets, written (temp file, fsync, rename) only
 *                            after every entry is staged and flushed. It is the commit point.
 *
 * A commit: take the lock; repair what an earlier run left (below); check every target
 * (a directory where a file should be is refused here, before anything moves); stage every
 * entry; write the journal; for each entry rename target -> old/i, then new/i -> target;
 * delete the journal; delete .synth.txn; release the lock.
 *
 * Repair, run by every command before it reads generated output (`recoverCommit`):
 * - .synth.txn without a journal: the run died while staging (targets untouched) or after
 *   it finished (targets new). Either way the targets are complete: remove .synth.txn.
 * - a journal with direction "forward": finish the swap. Each step is decided by what
 *   exists, so a repair that is itself killed is simply repaired again:
 *   new/i present -> (target present and old/i absent: rename target -> old/i), then
 *   rename new/i -> target; new/i absent -> entry i is done.
 * - direction "back" (a swap that failed in-process, e.g. on an immutable directory, is
 *   undone; the journal is rewritten to "back" first so a crash during the undo continues
 *   the undo): for each entry in reverse, new/i absent -> rename target -> new/i; then
 *   old/i present -> rename old/i -> target.
 * A forward repair that fails (the cause of the failure is still there) turns into a
 * back repair, so the old state comes back whole.
 *
 * Only renames happen after the commit point: they need no space, so a full disk fails
 * while staging, where undoing is just deleting .synth.txn. Staged files are flushed
 * (fsync) before the journal, so a power cut cannot install an empty file either.
 *
 * Tests make every step fail or kill the process through `faultHook`, called after every
 * step (see `faultHookFromEnv`).
 */

export const LOCK_FILE = '.synth.lock';
export const TXN_DIR = '.synth.txn';
const JOURNAL = 'journal.json';

/** A failure to write generated output. The message is one line and names the target relative to the root. */
export class CommitError extends Error {
  public readonly code = 'E_COMMIT';
  constructor(message: string) {
    super(message);
    this.name = 'CommitError';
  }
}

/** What one commit writes: whole directory trees (dir -> relative path -> text) and single files (path -> text). */
export interface CommitPlan {
  readonly trees?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readonly files?: ReadonlyMap<string, string>;
}

export interface CommitOptions {
  /** Repository root: the lock and the journal live here, and every target must be inside it. */
  readonly root: string;
  /** Called after every step with its name; tests make it throw or exit. */
  readonly faultHook?: (step: string) => void;
  /** Told once when another run holds the lock and this one waits. */
  readonly onWait?: (holderPid: number) => void;
  /** Told what an earlier, interrupted run left and what was done about it. */
  readonly onRepair?: (note: string) => void;
  /** How long to wait for another run's lock before giving up (default 60 s). */
  readonly lockTimeoutMs?: number;
}

interface Entry {
  /** Target, relative to the root, with / separators. */
  readonly target: string;
  readonly kind: 'tree' | 'file';
}

interface Journal {
  readonly version: 1;
  readonly direction: 'forward' | 'back';
  readonly entries: readonly Entry[];
}

/**
 * Replaces every tree and file of the plan, all or nothing. Throws CommitError (one line)
 * when it cannot; the previous output is then complete and no temp file is left.
 */
export function commit(plan: CommitPlan, opts: CommitOptions): void {
  const hook = opts.faultHook ?? (() => {});
  const entries: Array<Entry & { readonly content: ReadonlyMap<string, string> | string }> = [
    ...[...(plan.trees ?? [])].map(([dir, files]) => ({ target: inside(opts.root, dir), kind: 'tree' as const, content: files })),
    ...[...(plan.files ?? [])].map(([file, text]) => ({ target: inside(opts.root, file), kind: 'file' as const, content: text })),
  ];
  checkNotNested(entries);
  try {
    withLock(opts, () => {
      repair(opts.root, hook, opts.onRepair);
      for (const e of entries) preflight(opts.root, e);
      // Output identical to what is there (CI's freshness check, a synth with nothing
      // changed) is not rewritten: no staging, no fsync, no swap.
      const now = entries.map((e) => compareWithCurrent(opts.root, e));
      if (now.every((c) => c.same)) return;
      const txn = join(opts.root, TXN_DIR);
      let current: Entry | undefined;
      try {
        mkdirSync(join(txn, 'new'), { recursive: true });
        mkdirSync(join(txn, 'old'));
        entries.forEach((e, i) => {
          current = e;
          stage(join(txn, 'new', String(i)), e.content, now[i]!.unchanged);
          hook(`staged ${display(e)}`);
        });
        current = undefined;
        fsyncDir(join(txn, 'new'));
        writeJournal(txn, { version: 1, direction: 'forward', entries: entries.map(({ target, kind }) => ({ target, kind })) });
        hook('journal written');
      } catch (err) {
        rmSync(txn, { recursive: true, force: true });
        throw new CommitError(`cannot write ${current ? display(current) : 'generated output'}: ${describeFailure(opts.root, err)}; nothing was changed`);
      }
      try {
        entries.forEach((e, i) => {
          current = e;
          forward(opts.root, txn, e, i, hook);
        });
      } catch (err) {
        const cause = `cannot write ${current ? display(current) : 'generated output'}: ${describeFailure(opts.root, err)}`;
        try {
          rollBack(opts.root, hook);
        } catch (undo) {
          throw new CommitError(`${cause}, and undoing the partial swap failed too (${describeFailure(opts.root, undo)}); the next run finishes the undo`);
        }
        throw new CommitError(`${cause}; nothing was changed`);
      }
      // Committed. What is left is tidying, which the next run also does if this fails.
      try {
        unlinkSync(join(txn, JOURNAL));
        hook('journal removed');
      } catch {
        // the next run finds a journal whose entries are all done, or no journal
      }
      try {
        rmSync(txn, { recursive: true, force: true });
      } catch {
        // only the old output is left in there; the next run removes it
      }
    });
  } catch (err) {
    throw asCommitError(opts.root, err);
  }
}

/** fs errors (they carry an errno code) become one-line CommitErrors; anything else is a bug and stays as it is. */
function asCommitError(root: string, err: unknown): unknown {
  if (err instanceof CommitError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? new CommitError(`cannot write generated output: ${describeFailure(root, err)}; nothing was changed`) : err;
}

/**
 * Finishes or undoes what an interrupted run left, so generated output is complete old or
 * complete new state. Every command that reads generated output calls this first; it is
 * fast when there is nothing to do.
 */
export function recoverCommit(root: string, opts: Omit<CommitOptions, 'root'> = {}): void {
  if (!existsSync(join(root, TXN_DIR)) && !existsSync(join(root, LOCK_FILE))) return;
  try {
    withLock({ ...opts, root }, () => repair(root, opts.faultHook ?? (() => {}), opts.onRepair));
  } catch (err) {
    throw asCommitError(root, err);
  }
}

/** Runs `fn` holding the write lock, after repairing leftovers: for readers that need one consistent view. */
export function withCommitLock<T>(root: string, fn: () => T, opts: Omit<CommitOptions, 'root'> = {}): T {
  return withLock({ ...opts, root }, () => {
    repair(root, opts.faultHook ?? (() => {}), opts.onRepair);
    return fn();
  });
}

/** Writes a file via a sibling temp file and rename(2), which is atomic on one filesystem. */
export function writeFileAtomic(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, content);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
}

// ---------------------------------------------------------------------------------------
// Steps

/**
 * Writes entry content to its staging path. A file of a tree whose current copy has the
 * same text (`unchanged`: relative path -> current path) is hard-linked from it instead:
 * that copy was flushed when it was written, so only changed files cost a write and an
 * fsync (10,000 NodePools: one file each).
 */
function stage(path: string, content: ReadonlyMap<string, string> | string, unchanged: ReadonlyMap<string, string>): void {
  if (typeof content === 'string') {
    writeFileSync(path, content, { flush: true });
    return;
  }
  mkdirSync(path);
  for (const [rel, text] of content) {
    if (isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) throw new Error(`refusing to write ${rel} outside its directory`);
    const file = join(path, rel);
    mkdirSync(dirname(file), { recursive: true });
    const same = unchanged.get(rel);
    if (same !== undefined) {
      try {
        linkSync(same, file);
        continue;
      } catch {
        // another file system, or links not allowed: write it
      }
    }
    writeFileSync(file, text, { flush: true });
  }
}

/**
 * An entry against what its target holds now, each current file read once: `unchanged`,
 * the tree's files whose current copy has the planned text (relative path -> current
 * path), and `same`, whether the target already is exactly the plan. A tree holding
 * anything but directories and regular files (a link, a FIFO) is never the same, nor
 * linked from; an extra file or (empty) directory is a difference too.
 */
function compareWithCurrent(root: string, e: Entry & { readonly content: ReadonlyMap<string, string> | string }): { readonly same: boolean; readonly unchanged: ReadonlyMap<string, string> } {
  const none = { same: false, unchanged: new Map<string, string>() };
  const target = join(root, e.target);
  const st = statOrUndefined(target);
  if (st === undefined) return none;
  if (typeof e.content === 'string') return { same: st.isFile() && readOrUndefined(target) === e.content, unchanged: new Map() };
  const files = new Map<string, string>();
  let dirs = 0;
  const walk = (dir: string, prefix: string): boolean => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix + d.name;
      if (d.isDirectory()) {
        dirs += 1;
        if (!walk(join(dir, d.name), `${rel}/`)) return false;
      } else if (d.isFile()) files.set(rel, join(dir, d.name));
      else return false;
    }
    return true;
  };
  if (!st.isDirectory() || !walk(target, '')) return none;
  const unchanged = new Map<string, string>();
  for (const [rel, text] of e.content) {
    const file = files.get(rel);
    if (file !== undefined && readOrUndefined(file) === text) unchanged.set(rel, file);
  }
  // The directories the plan's files imply.
  const planned = new Set([...e.content.keys()].flatMap((rel) => rel.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  return { same: unchanged.size === e.content.size && files.size === e.content.size && planned.size === dirs, unchanged };
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function forward(root: string, txn: string, e: Entry, i: number, hook: (step: string) => void): void {
  const staged = join(txn, 'new', String(i));
  const old = join(txn, 'old', String(i));
  const target = join(root, e.target);
  if (!exists(staged)) return;
  if (exists(target)) {
    if (exists(old)) rmSync(target, { recursive: true, force: true });
    else {
      renameSync(target, old);
      hook(`moved aside ${display(e)}`);
    }
  }
  mkdirSync(dirname(target), { recursive: true });
  renameSync(staged, target);
  fsyncDir(dirname(target));
  hook(`installed ${display(e)}`);
}

function backward(root: string, txn: string, e: Entry, i: number, hook: (step: string) => void): void {
  const staged = join(txn, 'new', String(i));
  const old = join(txn, 'old', String(i));
  const target = join(root, e.target);
  if (!exists(staged) && exists(target)) {
    renameSync(target, staged);
    hook(`took back ${display(e)}`);
  }
  if (exists(old)) {
    renameSync(old, target);
    fsyncDir(dirname(target));
    hook(`restored ${display(e)}`);
  }
}

function rollBack(root: string, hook: (step: string) => void): void {
  const txn = join(root, TXN_DIR);
  const journal = readJournal(txn)!;
  if (journal.direction !== 'back') {
    writeJournal(txn, { ...journal, direction: 'back' });
    hook('journal turned back');
  }
  [...journal.entries].reverse().forEach((e) => backward(root, txn, e, journal.entries.indexOf(e), hook));
  unlinkSync(join(txn, JOURNAL));
  hook('journal removed');
  rmSync(txn, { recursive: true, force: true });
}

/** Brings leftovers of an interrupted run to complete old or complete new state (see the top of this file). */
function repair(root: string, hook: (step: string) => void, onRepair?: (note: string) => void): void {
  const txn = join(root, TXN_DIR);
  if (!exists(txn)) return;
  const journal = readJournal(txn);
  if (!journal) {
    rmSync(txn, { recursive: true, force: true });
    onRepair?.(`removed ${TXN_DIR}/, left by a run interrupted before or after its swap (the output is complete either way)`);
    return;
  }
  const targets = journal.entries.map(display).join(', ');
  if (journal.direction === 'forward') {
    try {
      journal.entries.forEach((e, i) => forward(root, txn, e, i, hook));
      unlinkSync(join(txn, JOURNAL));
      hook('journal removed');
      rmSync(txn, { recursive: true, force: true });
      onRepair?.(`finished the swap of an interrupted run: ${targets} are its complete output`);
      return;
    } catch {
      // The cause is still there (e.g. an immutable directory): restore the old output instead.
    }
  }
  try {
    rollBack(root, hook);
  } catch (err) {
    throw new CommitError(`cannot repair the interrupted write of ${targets}: ${describeFailure(root, err)}; fix that and run again`);
  }
  onRepair?.(`undid the partial swap of an interrupted run: ${targets} are as they were before it`);
}

// ---------------------------------------------------------------------------------------
// Checks

function inside(root: string, path: string): string {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep)[0] === TXN_DIR) {
    throw new CommitError(`refusing to write ${path}: generated output must be inside ${root}, not the root itself`);
  }
  return rel.split(sep).join('/');
}

function checkNotNested(entries: readonly Entry[]): void {
  for (const a of entries) {
    for (const b of entries) {
      if (a !== b && (a.target === b.target || b.target.startsWith(`${a.target}/`))) {
        throw new CommitError(`cannot write ${display(b)}: it is inside ${display(a)}, which is written in the same commit`);
      }
    }
  }
}

function preflight(root: string, e: Entry): void {
  const path = join(root, e.target);
  const st = statOrUndefined(path);
  if (st === undefined) return;
  if (e.kind === 'tree' && !st.isDirectory()) {
    throw new CommitError(`cannot write ${display(e)}: it is ${kindOf(st)}, not a directory; move it away and run again; nothing was changed`);
  }
  if (e.kind === 'file' && !st.isFile()) {
    throw new CommitError(`cannot write ${display(e)}: it is ${kindOf(st)}, not a regular file; move it away and run again; nothing was changed`);
  }
}

function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  return 'a special file';
}

function display(e: Entry): string {
  return e.kind === 'tree' ? `${e.target}/` : e.target;
}

/**
 * "operation not permitted (EPERM on argocd)" from a Node fs error. Paths are relative to
 * the root; paths in the staging area mean nothing to the user and are left out.
 */
function describeFailure(root: string, err: unknown): string {
  if (err instanceof CommitError) return err.message;
  const e = err as NodeJS.ErrnoException;
  if (!e.code) return String(e.message ?? err);
  const rel = e.path ? relative(root, e.path) : undefined;
  const where = rel === undefined || rel.startsWith(TXN_DIR) ? '' : ` on ${rel.startsWith('..') ? e.path : rel}`;
  return `${REASONS[e.code] ?? 'failed'} (${e.code}${where})`;
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EXDEV: 'on another file system than the repository',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  EBUSY: 'busy',
  EIO: 'input/output error',
};

// ---------------------------------------------------------------------------------------
// Journal and lock

function writeJournal(txn: string, journal: Journal): void {
  const tmp = join(txn, `${JOURNAL}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(journal)}\n`, { flush: true });
  renameSync(tmp, join(txn, JOURNAL));
  fsyncDir(txn);
}

function readJournal(txn: string): Journal | undefined {
  let text: string;
  try {
    text = readFileSync(join(txn, JOURNAL), 'utf8');
  } catch {
    return undefined;
  }
  // Written by rename, so it is whole or absent; anything else is not ours to act on.
  const refuse = () => new CommitError(`${TXN_DIR}/${JOURNAL} is not a journal this version understands; check the output, then remove ${TXN_DIR}/`);
  let journal: Journal;
  try {
    journal = JSON.parse(text) as Journal;
  } catch {
    throw refuse();
  }
  if (journal?.version !== 1 || !Array.isArray(journal.entries)) throw refuse();
  return journal;
}

function withLock<T>(opts: CommitOptions, fn: () => T): T {
  const lock = join(opts.root, LOCK_FILE);
  acquire(lock, opts);
  try {
    opts.faultHook?.('lock taken');
    return fn();
  } finally {
    release(lock);
  }
}

function acquire(lock: string, opts: CommitOptions): void {
  const mine = `${lock}.${process.pid}`;
  const started = Date.now();
  const timeout = opts.lockTimeoutMs ?? 60_000;
  let told = false;
  sweepLockTemps(opts.root);
  writeFileSync(mine, `${process.pid}\n`);
  try {
    for (;;) {
      try {
        linkSync(mine, lock);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new CommitError(`cannot take the lock ${LOCK_FILE}: ${describeFailure(opts.root, err)}`);
      }
      const holder = readPid(lock);
      if (holder === undefined) continue; // released between link and read
      if (!running(holder)) {
        breakStale(lock, holder);
        opts.onRepair?.(`removed the lock of run ${holder}, which no longer exists`);
        continue;
      }
      if (!told) {
        opts.onWait?.(holder);
        told = true;
      }
      if (Date.now() - started > timeout) {
        throw new CommitError(`another run (pid ${holder}) has been writing generated output for ${Math.round(timeout / 1000)} s; if it is gone, remove ${LOCK_FILE} and run again`);
      }
      sleep(50);
    }
  } finally {
    rmSync(mine, { force: true });
  }
}

/** Removes a stale lock, unless another run replaced it meanwhile (then it is put back). */
function breakStale(lock: string, holder: number): void {
  const aside = `${lock}.stale.${process.pid}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // someone else broke it first
  }
  if (readPid(aside) !== holder) {
    try {
      linkSync(aside, lock);
    } catch {
      // A third run took the lock in between; the one we moved will be found stale or released.
    }
  }
  rmSync(aside, { force: true });
}

/** `.synth.lock.<pid>` and `.synth.lock.stale.<pid>` of runs killed while taking or breaking the lock. */
function sweepLockTemps(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^\.synth\.lock\.(?:stale\.)?(\d+)$/.exec(name);
    if (m && !running(Number(m[1]))) rmSync(join(root, name), { force: true });
  }
}

function release(lock: string): void {
  if (readPid(lock) === process.pid) rmSync(lock, { force: true });
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return undefined;
  }
}

function running(pid: number): boolean {
  if (pid === 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// ---------------------------------------------------------------------------------------
// Small fs helpers

function statOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function exists(path: string): boolean {
  return statOrUndefined(path) !== undefined;
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------
// Fault injection for tests

/**
 * KARPENTER_GITOPS_FAULT, set only by tests: a comma-separated list of `<action>@<n>`, where
 * n counts the steps reported to the hook (1 = the first) and action is
 *   kill          SIGKILL this process (a crash at that instant),
 *   throw:<CODE>  throw an fs-like error with that code (ENOSPC, EPERM...) from that step,
 *   pause:<file>  create <file>.ready, then wait until <file> exists (to hold the lock while
 *                 a test starts a second run),
 *   trace         (no @n) print every step to stderr as `fault-step <n> <name>`.
 */
export function faultHookFromEnv(value: string | undefined): ((step: string) => void) | undefined {
  if (!value) return undefined;
  const rules = value.split(',').map((r) => {
    const m = /^(kill|trace|throw:[A-Z]+|pause:.+?)(?:@(\d+))?$/.exec(r);
    if (!m) throw new Error(`KARPENTER_GITOPS_FAULT: cannot parse ${JSON.stringify(r)}`);
    return { action: m[1]!, at: m[2] === undefined ? undefined : Number(m[2]) };
  });
  let n = 0;
  return (step) => {
    n += 1;
    for (const { action, at } of rules) {
      if (action === 'trace') process.stderr.write(`fault-step ${n} ${step}\n`);
      if (at !== n) continue;
      if (action === 'kill') process.kill(process.pid, 'SIGKILL');
      if (action.startsWith('throw:')) {
        const code = action.slice('throw:'.length);
        throw Object.assign(new Error(`${code}: simulated failure after "${step}"`), { code });
      }
      if (action.startsWith('pause:')) {
        const file = action.slice('pause:'.length);
        writeFileSync(`${file}.ready`, step);
        while (!existsSync(file)) sleep(20);
      }
    }
  };
}

