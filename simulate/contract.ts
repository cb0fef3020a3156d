import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import type { Catalogue } from '../catalogue/catalogue.js';

/**
 * The JSON between `npm run simulate` and the Go program (simulate/internal/contract).
 * The input is built here; the output enters here and is checked by this schema, so a
 * Karpenter upgrade that changes what the Go side prints fails loudly.
 */
export interface SimulationInput {
  zones: string[];
  /** karpenter.sh/v1 NodePools, as in dist/<env>/. */
  nodePools: unknown[];
  /** karpenter.k8s.aws/v1 EC2NodeClasses, as in dist/<env>/. */
  nodeClasses: unknown[];
  daemonSets: unknown[];
  pods: unknown[];
  catalogue: Catalogue;
  runs: number;
}

const price = z.number().nonnegative();

export const optionSchema = z.strictObject({ name: z.string().min(1), minPrice: price, maxPrice: price });

export const nodeClaimSchema = z.strictObject({
  nodePool: z.string().min(1),
  /** Instance-type options sent to EC2 Fleet, cheapest first. */
  instanceTypes: z.array(optionSchema).min(1),
  capacityTypes: z.array(z.enum(['spot', 'on-demand', 'reserved'])).min(1),
  zones: z.array(z.string()).min(1),
  pods: z.array(z.strictObject({ workload: z.string(), count: z.number().int().positive() })),
  requests: z.record(z.string(), z.string()),
});

export const simulationOutputSchema = z.strictObject({
  nodeClaims: z.array(nodeClaimSchema),
  pending: z.array(z.strictObject({ workload: z.string(), count: z.number().int().positive(), reason: z.string().min(1) })),
  runs: z.number().int().positive(),
  plans: z.number().int().positive(),
  agreeing: z.number().int().positive(),
  zonesRelabelled: z.boolean(),
  capacityTypesRelabelled: z.boolean(),
});

export type SimulationOutput = z.infer<typeof simulationOutputSchema>;
export type PlannedNodeClaim = z.infer<typeof nodeClaimSchema>;

/** Thrown when the Go program fails or prints something outside the contract. */
export class SimulationError extends Error {
  public readonly code = 'E_SIMULATION';
  constructor(message: string) {
    super(message);
    this.name = 'SimulationError';
  }
}

/** Runs the simulation binary on one input and checks its output against the contract. */
export function runSimulation(binary: string, input: SimulationInput): SimulationOutput {
  const res = spawnSync(binary, [], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (res.error) throw new SimulationError(`cannot run ${binary}: ${res.error.message}`);
  if (res.status !== 0) throw new SimulationError(`${binary} exited with ${res.status ?? res.signal}: ${res.stderr.trim()}`);
  let raw: unknown;
  try {
    raw = JSON.parse(res.stdout);
  } catch (err) {
    throw new SimulationError(`${binary} printed no JSON: ${(err as Error).message}`);
  }
  const parsed = simulationOutputSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SimulationError(`${binary} printed output outside the contract (simulate/contract.ts): ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** The script that builds the binary; `ensureBinary` takes another only as a test seam. */
export const ENSURE_SCRIPT = join(import.meta.dirname, '..', 'scripts', 'ensure-simulate.sh');

/**
 * Builds the binary once (scripts/ensure-simulate.sh, cached under the user's cache dir)
 * and returns its path. The Go module is this checkout's, whatever --root the inputs come from.
 */
export function ensureBinary(script = ENSURE_SCRIPT): string {
  const res = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) throw new SimulationError(`scripts/ensure-simulate.sh failed (exit ${res.status ?? res.signal}); Go is needed to build the simulation`);
  const path = res.stdout.trim().split('\n').at(-1);
  if (!path) throw new SimulationError('scripts/ensure-simulate.sh printed no binary path');
  return path;
}
