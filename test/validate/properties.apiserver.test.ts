import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Yaml } from 'cdk8s';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { dryRunApply } from '../support/apiserver.js';
import { useApiServer } from './apiserver-client.js';
import { environmentInput, synthesizeInput } from './arbitraries.js';

describe('property (real API server): valid environment configs synthesize into manifests kube-apiserver accepts', () => {
  const server = useApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'prop-apiserver-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('GIVEN any valid environment input WHEN every rendered object is applied with --dry-run=server --validate=strict THEN all are accepted without warnings', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(environmentInput, async (input) => {
        const file = join(dir, `run-${n++}.yaml`);
        // One multi-document file per run: one kubectl call instead of one per object.
        writeFileSync(file, synthesizeInput(input).map((o) => Yaml.stringify(o)).join('---\n'));
        const result = await dryRunApply(server(), file);
        expect(result.ok, `${result.stderr}${result.stdout}`).toBe(true);
      }),
      // Each run is a kubectl process and a server round trip: keep the count small.
      { numRuns: 15 },
    );
  });
});
