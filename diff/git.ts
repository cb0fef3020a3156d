import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import type { Manifest } from '../charts/render.js';

/**
 * Reads the committed dist/ of a base revision with git itself (`git show`), so the
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
  const listed = git(root, ['ls-tree', '--name-only', commit, '--', path]).trim();
  return listed === path ? git(root, ['show', `${commit}:${path}`]) : undefined;
}

/** Objects of dist/<env>/ at the commit, per environment directory found there. */
export function readDistAt(root: string, commit: string): Map<string, Manifest[]> {
  const listing = git(root, ['ls-tree', '-r', '-z', '--name-only', commit, '--', 'dist/']);
  const out = new Map<string, Manifest[]>();
  for (const path of listing.split('\0').filter(Boolean).sort()) {
    const m = /^dist\/([^/]+)\/([^/]+\.ya?ml)$/.exec(path);
    if (!m) continue;
    const text = git(root, ['show', `${commit}:${path}`]);
    const objects = parseManifests(text, `${path} at ${commit.slice(0, 12)}`);
    out.set(m[1]!, [...(out.get(m[1]!) ?? []), ...objects]);
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
