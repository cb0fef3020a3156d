import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/repo.js';

/**
 * Every npm script that runs a command answers --help and -h: the usage on stdout, exit 0,
 * nothing read or written. Run as `npm run <script>` runs it (scripts/run.mjs and the entry
 * package.json names), so a script added without --help fails here.
 */
const scripts = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts as Record<string, string>;
const commands = Object.entries(scripts)
  .filter(([name, line]) => line.startsWith('node scripts/run.mjs ') && name !== 'bench')
  .map(([name, line]) => [name, line.slice('node scripts/run.mjs '.length)] as const);

describe('--help', () => {
  it('covers the commands of package.json', () => {
    expect(commands.map(([name]) => name).sort()).toEqual(['analyze', 'catalogue', 'diff', 'infra', 'simulate', 'synth']);
  });

  it.each(commands.flatMap(([name, entry]) => ['--help', '-h'].map((flag) => [name, flag, entry] as const)))('GIVEN npm run %s -- %s THEN the usage on stdout, nothing on stderr, exit 0', (name, flag, entry) => {
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), entry, flag], { cwd: REPO, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^[Uu]sage: npm run ${name} `));
  });
});
