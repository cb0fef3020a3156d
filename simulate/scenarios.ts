import type { DistObjects, PodSource } from './inputs.js';

/** Replicas of inflate in the committed report: enough to need more than one node. */
export const REPORT_INFLATE_REPLICAS = 10;
/** Times Schedule runs per simulation; the output says how many runs agreed. */
export const DEFAULT_RUNS = 5;

export interface Scenario {
  readonly title: string;
  readonly pods: PodSource;
}

/**
 * The simulations of reports/<env>.simulation.md, which `npm run diff` also runs before
 * and after a change: every workload at its replicas together, and inflate at 10.
 */
export function reportScenarios(dist: DistObjects): Scenario[] {
  const workloads = dist.deployments.map((d) => d.metadata.name).filter((n) => n !== 'inflate');
  return [
    {
      title: workloads.length > 0 ? 'Every workload at its replicas, together' : 'Every workload at its replicas (this environment has none)',
      pods: { kind: 'deployments', names: workloads },
    },
    { title: `inflate at ${REPORT_INFLATE_REPLICAS} replicas`, pods: { kind: 'deployments', names: ['inflate'], replicas: REPORT_INFLATE_REPLICAS } },
  ];
}
