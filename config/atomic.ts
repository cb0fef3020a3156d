import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Atomic writes. Generated trees (dist/, argocd/) and the outputs files are read by
 * Argo CD and by people; a crash or a validation error must leave them as they were.
 */

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

/**
 * Replaces whole directories with new contents (relative path -> text), all or nothing:
 * every new tree is written in full beside its target first; only then are the targets
 * swapped in with renames. If writing fails, nothing was swapped. Stale files vanish
 * because the old directory is replaced, not updated.
 */
export function replaceDirectories(trees: ReadonlyMap<string, ReadonlyMap<string, string>>): void {
  const staged: Array<{ target: string; tmp: string }> = [];
  try {
    for (const [target, files] of trees) {
      mkdirSync(dirname(target), { recursive: true });
      const tmp = mkdtempSync(join(dirname(target), `.${basename(target)}.tmp-`));
      staged.push({ target, tmp });
      for (const [rel, content] of files) {
        const path = join(tmp, rel);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, content);
      }
    }
  } catch (err) {
    for (const s of staged) rmSync(s.tmp, { recursive: true, force: true });
    throw err;
  }
  // Swap phase: only renames, which do not fail for lack of space.
  const retired: string[] = [];
  for (const { target, tmp } of staged) {
    if (existsSync(target)) {
      const old = `${tmp}.old`;
      renameSync(target, old);
      retired.push(old);
    }
    renameSync(tmp, target);
  }
  for (const old of retired) rmSync(old, { recursive: true, force: true });
}
