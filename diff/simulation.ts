import type { Manifest } from '../charts/render.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { LoadedEnvironment } from '../config/environment.js';
import { ConfigError } from '../config/errors.js';
import { runSimulation, SimulationError, type SimulationOutput } from '../simulate/contract.js';
import { distObjects, prepare, type DistObjects, type Prepared } from '../simulate/inputs.js';
import { describePods } from '../simulate/render.js';
import { DEFAULT_RUNS, reportScenarios, type Scenario } from '../simulate/scenarios.js';

/**
 * What Karpenter would launch before and after a change: the simulations of
 * reports/<env>.simulation.md (simulate/scenarios.ts), run by Karpenter's own scheduler on
 * the base's objects and on the change's. Each side gets its own environment file's zones
 * and DaemonSets (the base's read with git; today's when the base's cannot be read), and
 * both today's catalogue.
 */

/** Whether to simulate: on unless asked not to, with the binary found (or built) on first need. */
export type SimulationChoice =
  | { readonly run: false; readonly why: string }
  | {
      readonly run: true;
      /** scripts/ensure-simulate.sh through simulate/contract.ts; throws when it cannot be built. */
      readonly binary: () => string;
      readonly runs?: number;
    };

/** One scenario on one side of the change. */
export type Side =
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly why: string }
  | { readonly status: 'ran'; readonly pods: string; readonly output: SimulationOutput };

export interface ScenarioComparison {
  readonly title: string;
  readonly before: Side;
  readonly after: Side;
}

export type EnvironmentSimulation =
  | { readonly status: 'ran'; readonly scenarios: readonly ScenarioComparison[] }
  /** The change removes the environment: nothing launches there afterwards. */
  | { readonly status: 'removed' }
  /** Nothing could be simulated (no catalogue for the region, say). */
  | { readonly status: 'not-run'; readonly why: string };

export type SimulationReview =
  | { readonly status: 'skipped'; readonly why: string }
  /** The binary could not be had: nothing was simulated anywhere. */
  | { readonly status: 'unavailable'; readonly why: string }
  | { readonly status: 'ran'; readonly environments: ReadonlyMap<string, EnvironmentSimulation> };

export interface EnvironmentSides {
  readonly name: string;
  /** The base's dist/<env>/ objects; undefined when the environment is new. */
  readonly before: readonly Manifest[] | undefined;
  /** Where the base's objects come from, for errors: `<commit>:dist/<env>`. */
  readonly beforeWhere: string;
  /** The change, synthesized in memory; undefined when the change removes the environment. */
  readonly after: { readonly environment: LoadedEnvironment; readonly objects: readonly Manifest[] } | undefined;
  /** The environment file at the base, for the base's zones and DaemonSets; today's when undefined. */
  readonly beforeEnvironment?: LoadedEnvironment;
  /** The region's catalogue, or why it could not be read; undefined when the change removes the environment. */
  readonly catalogue: Catalogue | Error | undefined;
}

/** Thrown inside to stop at the first environment when the binary cannot be had. */
class Unavailable extends Error {}

export function simulateChange(root: string, envs: readonly EnvironmentSides[], choice: SimulationChoice): SimulationReview {
  if (!choice.run) return { status: 'skipped', why: choice.why };
  let binary: string | undefined;
  const getBinary = () => {
    if (binary === undefined) {
      try {
        binary = choice.binary();
      } catch (err) {
        throw new Unavailable((err as Error).message);
      }
    }
    return binary;
  };
  const environments = new Map<string, EnvironmentSimulation>();
  try {
    for (const env of envs) environments.set(env.name, simulateEnvironment(root, env, choice.runs ?? DEFAULT_RUNS, getBinary));
  } catch (err) {
    if (err instanceof Unavailable) return { status: 'unavailable', why: err.message };
    throw err;
  }
  return { status: 'ran', environments };
}

type Loaded = { readonly dist: DistObjects; readonly scenarios: readonly Scenario[] } | { readonly why: string };

/** The objects of one side and their scenarios, or why they cannot be simulated (a base without a NodePool, say). */
function load(objects: readonly Manifest[], where: string): Loaded {
  try {
    const dist = distObjects(objects, where);
    return { dist, scenarios: reportScenarios(dist) };
  } catch (err) {
    if (err instanceof ConfigError) return { why: err.message };
    throw err;
  }
}

/** What both sides of an environment share: the catalogue, the binary, the runs. */
interface Shared {
  readonly root: string;
  readonly catalogue: Catalogue;
  readonly runs: number;
  readonly binary: () => string;
  /** Outputs by input (the catalogue left out: one object for both sides) within one scenario. */
  readonly outputs: Map<string, SimulationOutput>;
}

function simulateSide(shared: Shared, environment: LoadedEnvironment, side: Loaded | undefined, i: number): Side {
  if (side === undefined) return { status: 'absent' };
  if ('why' in side) return { status: 'failed', why: side.why };
  const { root, catalogue, runs, binary, outputs } = shared;
  let prepared: Prepared;
  try {
    prepared = prepare({ root, env: environment.name, pods: side.scenarios[i]!.pods, runs, dist: side.dist, environment, catalogue });
  } catch (err) {
    if (err instanceof ConfigError) return { status: 'failed', why: err.message };
    throw err;
  }
  // Identical inputs give the identical plan: run Karpenter once, so a scenario the change
  // does not touch costs one simulation, not two.
  const key = JSON.stringify({ ...prepared.input, catalogue: undefined });
  let output = outputs.get(key);
  if (output === undefined) {
    try {
      output = runSimulation(binary(), prepared.input);
    } catch (err) {
      if (err instanceof SimulationError) return { status: 'failed', why: err.message };
      throw err;
    }
    outputs.set(key, output);
  }
  return { status: 'ran', pods: describePods(prepared), output };
}

function simulateEnvironment(root: string, env: EnvironmentSides, runs: number, binary: () => string): EnvironmentSimulation {
  if (env.after === undefined) return { status: 'removed' };
  const catalogue = env.catalogue;
  if (catalogue === undefined || catalogue instanceof Error) return { status: 'not-run', why: `no instance catalogue: ${catalogue?.message ?? 'none was read'}` };
  const after = load(env.after.objects, `dist/${env.name}`);
  const before = env.before === undefined ? undefined : load(env.before, env.beforeWhere);
  // Paired by position: reportScenarios gives the same scenarios in the same order for any objects.
  const titles = ('scenarios' in after ? after : before !== undefined && 'scenarios' in before ? before : undefined)?.scenarios.map((s) => s.title);
  if (titles === undefined) return { status: 'not-run', why: 'why' in after ? after.why : '' };
  const environment = env.after.environment;
  const scenarios = titles.map((title, i): ScenarioComparison => {
    const shared: Shared = { root, catalogue, runs, binary, outputs: new Map() };
    return { title, before: simulateSide(shared, env.beforeEnvironment ?? environment, before, i), after: simulateSide(shared, environment, after, i) };
  });
  return { status: 'ran', scenarios };
}

const pendingPods = (s: Side) => (s.status === 'ran' ? s.output.pending.reduce((n, p) => n + p.count, 0) : 0);

/** Scenarios where the change leaves more pods pending than the base did (`--fail-on pending`). */
export function morePending(review: SimulationReview): string[] {
  if (review.status !== 'ran') return [];
  return [...review.environments].flatMap(([name, env]) =>
    env.status === 'ran' ? env.scenarios.filter((s) => s.after.status === 'ran' && pendingPods(s.after) > pendingPods(s.before)).map((s) => `${name}: ${s.title}`) : [],
  );
}

/**
 * What could not be simulated, one line each, for stderr: the Markdown says it too, but a
 * log reader should not miss it. Empty when every simulation asked for ran.
 */
export function simulationWarnings(review: SimulationReview): string[] {
  if (review.status === 'unavailable') return [`simulation not run: ${review.why}`];
  if (review.status !== 'ran') return [];
  return [...review.environments].flatMap(([name, env]) => {
    if (env.status === 'not-run') return [`${name}: not simulated: ${env.why}`];
    if (env.status !== 'ran') return [];
    return env.scenarios.flatMap((s) =>
      (['before', 'after'] as const).flatMap((side) => {
        const r = s[side];
        return r.status === 'failed' ? [`${name}: ${s.title}, ${side} the change: not simulated: ${r.why}`] : [];
      }),
    );
  });
}
