/**
 * vitest globalSetup of the `simulate` project: builds (once, cached under the user's
 * cache directory) the Go program that runs Karpenter's own scheduler offline.
 *
 * Tests read its path with `inject('simulateBinary')`.
 */
import type { TestProject } from 'vitest/node';
import { ensureBinary } from '../../simulate/contract.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the `simulate` binary (scripts/ensure-simulate.sh). */
    simulateBinary: string;
  }
}

export function setup(project: TestProject): void {
  const started = Date.now();
  const binary = ensureBinary();
  console.error(`simulate binary ready at ${binary} in ${Date.now() - started} ms`);
  project.provide('simulateBinary', binary);
}
