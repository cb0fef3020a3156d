import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, tempRepo } from '../support/repo.js';
import { synthesize } from '../../charts/synth.js';
import { commit } from '../../config/atomic.js';

/**
 * A real git repository in a temp dir holding this project's inputs and a committed dist/
 * (the base), on branch main; a test then edits an environment on a feature branch, as a
 * pull request would. Real git: the diff reads the base with `git show`.
 */
export function gitRepo() {
  const repo = tempRepo();
  cpSync(join(REPO, 'catalogue'), join(repo.root, 'catalogue'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo.root, '-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  const synthAndCommit = (message: string) => {
    const result = synthesize({ root: repo.root });
    const all = new Map<string, string>();
    for (const env of result.environments) for (const [f, text] of env.files) all.set(join(env.environment.name, f), text);
    commit({ trees: new Map([[join(repo.root, 'dist'), all]]) }, { root: repo.root });
    git('add', '-A');
    git('commit', '-q', '-m', message);
  };
  synthAndCommit('base');
  git('checkout', '-q', '-b', 'feature');
  return { ...repo, git, synthAndCommit };
}
