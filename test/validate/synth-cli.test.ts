import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from './fixtures.js';

const run = promisify(execFile);

describe('npm run synth with a manifest the CRD rejects', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN a capacity reservation term with both id and tags (zod accepts it; a CEL rule of the CRD does not) WHEN synthesized THEN exit 1, the CEL message at the environment file and field that produced it, with the value, dist/ untouched', async () => {
    dir = mkdtempSync(join(tmpdir(), 'synth-validate-'));
    cpSync(join(ROOT, 'environments', 'dev.yaml'), join(dir, 'environments', 'dev.yaml'));
    cpSync(join(ROOT, 'infra', 'outputs', 'dev.json'), join(dir, 'infra', 'outputs', 'dev.json'));
    const envFile = join(dir, 'environments', 'dev.yaml');
    const text = readFileSync(envFile, 'utf8');
    expect(text).toMatch(/^nodeClasses:\n {2}- name: default\n/m);
    writeFileSync(envFile, text.replace(/^nodeClasses:\n {2}- name: default\n/m, 'nodeClasses:\n  - name: default\n    capacityReservationSelectorTerms: [{id: cr-0123456789abcdef0, tags: {team: a}}]\n'));
    cpSync(join(ROOT, 'dist', 'dev'), join(dir, 'dist', 'dev'), { recursive: true });
    const before = readdirSync(join(dir, 'dist', 'dev')).map((f) => readFileSync(join(dir!, 'dist', 'dev', f), 'utf8'));

    const result = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'charts', 'main.ts'), '--root', dir, '--env', 'dev'], { cwd: ROOT }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: invalid input, nothing was written\n' +
        "environments/dev.yaml: nodeClasses[0].capacityReservationSelectorTerms: 'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term (EC2NodeClass/default spec.capacityReservationSelectorTerms), got [{\"id\":\"cr-0123456789abcdef0\",\"tags\":{\"team\":\"a\"}}]\n",
    );
    expect(readdirSync(join(dir, 'dist', 'dev')).map((f) => readFileSync(join(dir!, 'dist', 'dev', f), 'utf8'))).toEqual(before);
  });
});
