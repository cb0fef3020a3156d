/**
 * The JSON contract between the CLI and the Go program: a change on either side fails
 * loudly, naming what changed.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { readCatalogue } from '../../catalogue/catalogue.js';
import { runSimulation, type SimulationInput } from '../../simulate/contract.js';
import { REPO } from '../support/repo.js';

const input = (nodePools: unknown[]): SimulationInput => ({
  zones: ['us-east-1a'],
  nodePools,
  nodeClasses: [],
  daemonSets: [],
  pods: [],
  catalogue: readCatalogue(REPO, 'us-east-1'),
  runs: 1,
});

describe('simulation contract', () => {
  it('the Go side refuses a field Karpenter does not know, naming it', () => {
    // GIVEN a NodePool with a misspelt field (Karpenter would drop it silently)
    const pool = { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'p' }, spec: { weigth: 10 } };
    expect(() => runSimulation(inject('simulateBinary'), input([pool]))).toThrow(/exited with 1: simulate: decoding simulation input: json: unknown field "weigth"$/);
  });

  it('the TypeScript side refuses output outside the schema, naming the field', () => {
    // GIVEN a program that prints last version's output (no capacityTypesRelabelled)
    const dir = mkdtempSync(join(tmpdir(), 'simulate-contract-'));
    try {
      const fake = join(dir, 'simulate');
      writeFileSync(fake, `#!/bin/sh\ncat >/dev/null\necho '{"nodeClaims":[],"pending":[],"runs":1,"plans":1,"agreeing":1,"zonesRelabelled":true}'\n`);
      chmodSync(fake, 0o755);
      expect(() => runSimulation(fake, input([]))).toThrow(`${fake} printed output outside the contract (simulate/contract.ts): capacityTypesRelabelled: Invalid input: expected boolean, received undefined`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
