import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseManifests, readDistAt, readFileAt, readFilesAt } from '../../diff/git.js';
import { REPO } from '../support/repo.js';

describe('diff/git: reading committed manifests', () => {
  it('GIVEN a YAML alias in a committed file WHEN parsed THEN it is refused, not expanded', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {x: "1"}\nextra: *d\n';
    expect(() => parseManifests(text, 'dist/dev/x.yaml at abc')).toThrow(/^dist\/dev\/x\.yaml at abc: .*[Aa]lias/);
  });

  it('GIVEN a document that is not a Kubernetes object WHEN parsed THEN the error names the file and what was found', () => {
    expect(() => parseManifests('- 1\n- 2\n', 'dist/dev/y.yaml at abc')).toThrow('dist/dev/y.yaml at abc: must be a Kubernetes object with kind and metadata.name, got [1,2]');
  });

  it('GIVEN several documents and an empty one WHEN parsed THEN each object is returned in order', () => {
    expect(parseManifests('kind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b}\n', 'f').map((m) => m.kind)).toEqual(['A', 'B']);
  });
});

describe('diff/git: reading files at a commit with one git process', () => {
  // A real repository: files with multibyte text, a space and a newline in their names, a directory.
  const root = mkdtempSync(join(tmpdir(), 'diff-git-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  const files: Record<string, string> = {
    'a.txt': 'plain\n',
    'dir/é ü.txt': 'Grüße, 東京\n', // byte sizes differ from character counts
    'dir/with space.yaml': 'kind: A\n',
    'new\nline.txt': 'odd name\n',
    'empty.txt': '',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'one');
  const commit = git('rev-parse', 'HEAD').trim();

  it('GIVEN files, a directory and missing paths WHEN read in one batch THEN each file has its exact text and the others are undefined', () => {
    const asked = [...Object.keys(files), 'dir', 'missing.txt', 'dir/missing blob 12'];
    const got = readFilesAt(root, commit, asked);
    expect([...got.keys()].sort()).toEqual([...asked].sort());
    for (const [path, text] of Object.entries(files)) expect(got.get(path), path).toBe(text);
    expect([got.get('dir'), got.get('missing.txt'), got.get('dir/missing blob 12')]).toEqual([undefined, undefined, undefined]);
    // The single-file reader agrees, file by file, with git show.
    for (const path of Object.keys(files)) expect(readFileAt(root, commit, path)).toBe(git('show', `${commit}:${path}`));
  });

  it('GIVEN the committed dist/ of this repository WHEN read at HEAD THEN every environment has the objects of its files', () => {
    const dist = readDistAt(REPO, 'HEAD');
    const envs = execFileSync('git', ['-C', REPO, 'ls-tree', '--name-only', 'HEAD', 'dist/'], { encoding: 'utf8' }).trim().split('\n').map((p) => p.slice('dist/'.length));
    expect([...dist.keys()].sort()).toEqual(envs.sort());
    for (const env of envs) {
      const names = execFileSync('git', ['-C', REPO, 'ls-tree', '--name-only', 'HEAD', `dist/${env}/`], { encoding: 'utf8' }).trim().split('\n');
      expect(dist.get(env)!.map((o) => `${o.kind}.${o.metadata.name}.k8s.yaml`).sort()).toEqual(names.map((n) => n.slice(`dist/${env}/`.length)).sort());
      // And each object is the file's as git has it at HEAD.
      for (const name of names) {
        const [object] = parseManifests(execFileSync('git', ['-C', REPO, 'show', `HEAD:${name}`], { encoding: 'utf8' }), name);
        expect(dist.get(env)).toContainEqual(object);
      }
    }
  });
});
