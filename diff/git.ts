import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import type { Manifest } from '../charts/render.js';

/**
 * Reads the committed dist/ of a base revision with git itself (`git cat-file`), so the
 * working tree, and whatever synth last wrote there, never stands in for the base.
 */
export class GitError extends Error {
  public readonly code = 'E_GIT';
}

function git(root: string, args: readonly string[]): string {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new GitError(`git ${args.join(' ')} failed: ${stderr || (err as Error).message}`);
  }
}

const exists = (root: string, ref: string) => {
  try {
    git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return true;
  } catch {
    return false;
  }
};

export interface Base {
  /** What the user gave or what we chose, for the report's heading. */
  readonly label: string;
  readonly commit: string;
}

/**
 * The base: the given ref, else the merge base of HEAD with the default branch (the
 * remote's HEAD, else main, else master), as a pull request would be compared.
 */
export function resolveBase(root: string, ref: string | undefined): Base {
  if (ref !== undefined) {
    if (!exists(root, ref)) throw new GitError(`--base: must name a commit in ${root}, got "${ref}"`);
    return { label: ref, commit: git(root, ['rev-parse', `${ref}^{commit}`]).trim() };
  }
  let branch: string | undefined;
  try {
    branch = git(root, ['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD']).trim();
  } catch {
    branch = ['main', 'master'].find((b) => exists(root, b));
  }
  if (branch === undefined) throw new GitError('no default branch found (no origin/HEAD, main or master): pass --base <git ref>');
  const commit = git(root, ['merge-base', 'HEAD', branch]).trim();
  return { label: `merge base of HEAD and ${branch}`, commit };
}

/** A file's text at the commit, or undefined when the commit has no such file. */
export function readFileAt(root: string, commit: string, path: string): string | undefined {
  return readFilesAt(root, commit, [path]).get(path);
}

/**
 * The text of each path at the commit (undefined: no such file there), read by one
 * `git cat-file --batch` for all of them: dist/ of 300 environments is 3,900 files, and a
 * `git show` per file cost a process each. A path with a newline, which the batch
 * protocol cannot name, is read with `git show` on its own.
 */
export function readFilesAt(root: string, commit: string, paths: readonly string[]): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  const batch = paths.filter((p) => !p.includes('\n'));
  for (const p of paths) if (p.includes('\n')) out.set(p, git(root, ['show', `${commit}:${p}`]));
  if (batch.length === 0) return out;
  let bytes: Buffer;
  try {
    bytes = execFileSync('git', ['-C', root, 'cat-file', '--batch'], { input: batch.map((p) => `${commit}:${p}\n`).join(''), stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1024 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new GitError(`git cat-file --batch failed: ${stderr || (err as Error).message}`);
  }
  let at = 0;
  for (const path of batch) {
    const eol = bytes.indexOf(0x0a, at);
    const header = bytes.toString('utf8', at, eol);
    at = eol + 1;
    // `<oid> <type> <size>`, then the content and a newline; or `<name> missing` (also for a path git cannot resolve).
    const m = / (blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!m) {
      out.set(path, undefined);
      continue;
    }
    const size = Number(m[2]);
    out.set(path, m[1] === 'blob' ? bytes.toString('utf8', at, at + size) : undefined);
    at += size + 1;
  }
  return out;
}

/** Objects of dist/<env>/ at the commit, per environment directory found there. */
export function readDistAt(root: string, commit: string): Map<string, Manifest[]> {
  const listing = git(root, ['ls-tree', '-r', '-z', '--name-only', commit, '--', 'dist/']);
  const files = listing
    .split('\0')
    .filter(Boolean)
    .sort()
    .flatMap((path) => {
      const m = /^dist\/([^/]+)\/([^/]+\.ya?ml)$/.exec(path);
      return m ? [{ path, env: m[1]! }] : [];
    });
  const texts = readFilesAt(root, commit, files.map((f) => f.path));
  const out = new Map<string, Manifest[]>();
  for (const { path, env } of files) {
    const objects = parseManifests(texts.get(path) ?? '', `${path} at ${commit.slice(0, 12)}`);
    out.set(env, [...(out.get(env) ?? []), ...objects]);
  }
  return out;
}

/** YAML documents as manifests; anything else is an error naming the file. Aliases are refused, not expanded. */
export function parseManifests(text: string, where: string): Manifest[] {
  const docs = parseAllDocuments(text, { maxAliasCount: 0 } as never);
  const out: Manifest[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) throw new GitError(`${where}: must be YAML, got: ${doc.errors[0]!.message}`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 0 });
    } catch (err) {
      throw new GitError(`${where}: ${(err as Error).message}`);
    }
    if (value === null || value === undefined) continue;
    const v = value as Partial<Manifest>;
    if (typeof v !== 'object' || typeof v.kind !== 'string' || typeof v.metadata?.name !== 'string') {
      throw new GitError(`${where}: must be a Kubernetes object with kind and metadata.name, got ${JSON.stringify(value).slice(0, 80)}`);
    }
    out.push(value as Manifest);
  }
  return out;
}
