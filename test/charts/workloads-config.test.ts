import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { EnvironmentChart } from '../../charts/environment-chart.js';
import { validateConstructs } from '../support/constructs.js';
import { ConfigError } from '../../config/errors.js';
import { loadEnvironment, parseEnvironment } from '../../config/environment.js';
import type { NodePoolConfig } from '../../config/karpenter-schema.js';
import { readOutputs } from '../../config/outputs.js';
import { podSecurityLabels } from '../../config/pod-security.js';
import { allowedCapacityTypes, disruptionBudgetProblem, gracePeriodSeconds } from '../../config/workload-schema.js';

const REPO = join(import.meta.dirname, '..', '..');
const FILE = 'environments/test.yaml';

/** A valid environment with a Spot+On-Demand pool, a Spot-only tainted pool and an On-Demand pool, plus `workloads`. */
function envText(workloads: unknown[]): string {
  return stringify({
    cluster: { name: 'c', region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] },
    nodeClasses: [{ name: 'default' }],
    nodePools: [
      { name: 'mixed', preset: 'spot-with-on-demand-fallback' },
      { name: 'spot', preset: 'spot-multi-arch', taints: [{ key: 'workload-class', value: 'batch', effect: 'NoSchedule' }] },
      { name: 'ondemand', requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] },
    ],
    workloads,
  });
}
const parse = (workloads: unknown[]) => parseEnvironment(FILE, envText(workloads));
/** The message lines of the ConfigError that parsing these workloads throws. */
function errorsFor(workloads: unknown[]): string[] {
  try {
    parse(workloads);
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}
const warningsFor = (workloads: unknown[]) => parse(workloads).warnings;
const api = { name: 'api', image: 'example/api:1' };
const never = "a budget that allows no eviction blocks Karpenter's consolidation, drift and expiry of every node running these pods, forever";

describe('workloads in an environment file: bad input', () => {
  it('names the path of a nodePool that does not exist and lists the ones that do', () => {
    expect(errorsFor([{ ...api, nodePool: 'gpu' }])).toEqual([`${FILE}: workloads[0].nodePool: must name one of the nodePools (mixed, spot, ondemand), got "gpu"`]);
  });

  it('refuses a budget that never allows an eviction, at its field', () => {
    expect(errorsFor([{ ...api, replicas: 3, disruptionBudget: { minAvailable: 3 } }])).toEqual([
      `${FILE}: workloads[0].disruptionBudget.minAvailable: must allow at least one of the 3 replicas to be evicted: ${never}, got 3`,
    ]);
    expect(errorsFor([{ ...api, disruptionBudget: { maxUnavailable: '0%' } }])).toEqual([
      `${FILE}: workloads[0].disruptionBudget.maxUnavailable: must allow at least one of the 2 replicas to be evicted (0% of 2 rounds up to 0): ${never}, got "0%"`,
    ]);
  });

  it('accepts such a budget at replicas 0', () => {
    expect(parse([{ ...api, replicas: 0, disruptionBudget: { minAvailable: 1 } }]).config.workloads[0]!.replicas).toBe(0);
  });

  it('refuses a budget with both fields, and a pod count written as a string', () => {
    expect(errorsFor([{ ...api, disruptionBudget: { maxUnavailable: 1, minAvailable: 1 } }])).toEqual([
      `${FILE}: workloads[0].disruptionBudget: must set exactly one of maxUnavailable or minAvailable, got {"maxUnavailable":1,"minAvailable":1}`,
    ]);
    expect(errorsFor([{ ...api, disruptionBudget: { maxUnavailable: '1' } }])).toEqual([
      `${FILE}: workloads[0].disruptionBudget.maxUnavailable: must be a whole number of pods (e.g. 1) or a percentage from 0% to 100% (e.g. 25%), got "1"`,
    ]);
  });

  it('says what is wrong with every field at once, including unknown fields', () => {
    expect(errorsFor([{ name: 'Api', imag: 'x', replicas: -1, port: 0, capacityType: 'cheap' }])).toEqual([
      `${FILE}: workloads[0].name: must be a lowercase RFC 1123 label (a-z, 0-9 and "-", at most 63 characters), got "Api"`,
      `${FILE}: workloads[0].image: is required (a string)`,
      `${FILE}: workloads[0].port: must be a port number from 1 to 65535, got 0`,
      `${FILE}: workloads[0].replicas: must be 0 or more, got -1`,
      `${FILE}: workloads[0].capacityType: must be one of "on-demand", "spot", "reserved", got "cheap"`,
      `${FILE}: workloads[0]: unknown field "imag"; allowed: name, namespace, image, command, args, env, port, replicas, resources, readinessProbe, ` +
        'preStopSleepSeconds, drainSeconds, terminationGracePeriodSeconds, disruptionBudget, topologySpread, doNotDisrupt, nodePool, capacityType, podAnnotations, ' +
        'podLabels, nodeSelector, affinity, topologySpreadConstraints, priorityClassName, serviceAccountName, podSecurityContext, securityContext, podSecurity',
    ]);
  });

  it('refuses a capacity type the pool cannot launch', () => {
    expect(errorsFor([{ ...api, nodePool: 'spot', capacityType: 'on-demand' }])).toEqual([
      `${FILE}: workloads[0].capacityType: must be a capacity type NodePool "spot" can launch (spot), or pods never schedule, got "on-demand"`,
    ]);
  });

  it('refuses a preStop longer than the grace period', () => {
    expect(errorsFor([{ ...api, preStopSleepSeconds: 30, terminationGracePeriodSeconds: 20 }])).toEqual([
      `${FILE}: workloads[0].terminationGracePeriodSeconds: must be at least preStopSleepSeconds (30): the preStop hook runs inside the grace period, got 20`,
    ]);
  });

  it('refuses a probe with two handlers, and a portless probe when there is no port', () => {
    expect(errorsFor([{ ...api, readinessProbe: { httpGet: { path: '/r' }, exec: { command: ['true'] } } }])).toEqual([
      `${FILE}: workloads[0].readinessProbe: must set exactly one of httpGet, tcpSocket or exec, got {"httpGet":{"path":"/r"},"exec":{"command":["true"]}}`,
    ]);
    expect(errorsFor([{ ...api, port: false, readinessProbe: { httpGet: { path: '/r' } } }])).toEqual([
      `${FILE}: workloads[0].readinessProbe: must name a port when port is false: there is no http port to default to, got {"httpGet":{"path":"/r"}}`,
    ]);
  });

  it('refuses the name inflate and names used twice (file names are <Kind>.<name>, whatever the namespace)', () => {
    expect(errorsFor([{ ...api, name: 'inflate' }, api, { ...api, namespace: 'other' }])).toEqual([
      `${FILE}: workloads[0].name: must not be "inflate": every environment already gets the inflate test Deployment, got "inflate"`,
      `${FILE}: workloads[2].name: must be unique among workloads; "api" is already used at workloads[1], got "api"`,
    ]);
  });
});

describe('workload warnings', () => {
  const spotWarning = (name: string, grace: number, pools: string) =>
    `${FILE}: workloads[0] "${name}": terminationGracePeriodSeconds ${grace} s (preStop included) is longer than the 120 s Spot interruption notice, ` +
    `and ${pools} can launch Spot: EC2 reclaims the instance 120 s after the notice whether or not the pod has finished, so the end of its drain never happens; ` +
    'keep terminationGracePeriodSeconds (default preStopSleepSeconds + drainSeconds + 5) at most 120 s, or set capacityType: on-demand';

  it('warns when the grace period outlasts the Spot notice on a Spot-capable pool (preset applied)', () => {
    expect(warningsFor([{ ...api, nodePool: 'mixed', drainSeconds: 106 }])).toEqual([spotWarning('api', 121, 'NodePool "mixed"')]);
    expect(warningsFor([{ ...api, nodePool: 'spot', terminationGracePeriodSeconds: 300 }])).toEqual([spotWarning('api', 300, 'NodePool "spot"')]);
  });

  it('does not warn at exactly 120 s', () => {
    expect(warningsFor([{ ...api, nodePool: 'mixed', drainSeconds: 105 }])).toEqual([]);
  });

  it('does not warn on an On-Demand pool, or when the workload pins on-demand', () => {
    expect(warningsFor([{ ...api, nodePool: 'ondemand', drainSeconds: 600 }])).toEqual([]);
    expect(warningsFor([{ ...api, nodePool: 'mixed', capacityType: 'on-demand', drainSeconds: 600 }])).toEqual([]);
  });

  it('without a nodePool, looks at the pools the pods can land on (untainted ones)', () => {
    expect(warningsFor([{ ...api, drainSeconds: 600 }])).toEqual([spotWarning('api', 615, 'NodePool "mixed"')]);
  });

  it('warns about a single replica', () => {
    expect(warningsFor([{ ...api, replicas: 1 }])).toEqual([
      `${FILE}: workloads[0] "api": replicas 1: every Spot reclaim, consolidation or drift of its node is an outage; run 2 or more`,
    ]);
  });
});

describe('pure rules', () => {
  const pool = (requirements?: NodePoolConfig['requirements'], preset?: NodePoolConfig['preset']): NodePoolConfig => ({ name: 'p', nodeClass: 'default', requirements, preset });
  const ct = (operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist', values?: string[]) => [{ key: 'karpenter.sh/capacity-type', operator, values }];

  it('allowedCapacityTypes: Karpenter defaults to on-demand; In, NotIn, Exists, presets', () => {
    expect(allowedCapacityTypes(pool())).toEqual(['on-demand']);
    expect(allowedCapacityTypes(pool(ct('In', ['spot'])))).toEqual(['spot']);
    expect(allowedCapacityTypes(pool(ct('NotIn', ['spot'])))).toEqual(['on-demand', 'reserved']);
    expect(allowedCapacityTypes(pool(ct('Exists')))).toEqual(['on-demand', 'spot', 'reserved']);
    expect(allowedCapacityTypes(pool(ct('DoesNotExist')))).toEqual([]);
    expect(allowedCapacityTypes(pool(undefined, 'spot-with-on-demand-fallback'))).toEqual(['on-demand', 'spot']);
    expect(allowedCapacityTypes(pool(ct('In', ['on-demand']), 'spot-small'))).toEqual(['on-demand']);
  });

  it('gracePeriodSeconds: preStop 10 + drain 30 + 5 = 45 by default', () => {
    expect([gracePeriodSeconds({}), gracePeriodSeconds({ preStopSleepSeconds: 0, drainSeconds: 0 }), gracePeriodSeconds({ terminationGracePeriodSeconds: 7 })]).toEqual([45, 5, 7]);
  });

  it('disruptionBudgetProblem rounds percentages up, as the disruption controller does', () => {
    expect(disruptionBudgetProblem({ maxUnavailable: '10%' }, 2)).toBeUndefined(); // ceil(0.2) = 1
    expect(disruptionBudgetProblem({ minAvailable: '50%' }, 1)?.field).toBe('minAvailable'); // ceil(0.5) = 1 = replicas
    expect(disruptionBudgetProblem({ minAvailable: '50%' }, 3)).toBeUndefined(); // ceil(1.5) = 2 < 3
  });
});

describe('shipped environments', () => {
  const build = (env: string) => {
    const environment = loadEnvironment(join(REPO, 'environments', `${env}.yaml`), `environments/${env}.yaml`);
    const chart = new EnvironmentChart(new App(), { environment, outputs: readOutputs(join(REPO, 'infra', 'outputs', `${env}.json`)) });
    validateConstructs(chart);
    return { environment, objects: chart.toJson() as Array<{ kind: string; metadata: any; spec: any }> };
  };

  it.each(['staging', 'prod'])('%s runs the example checkout API in its own namespace, Spot-ready, with no workload warning', (env) => {
    const { environment, objects } = build(env);
    const names = objects.filter((o) => ['Namespace', 'Deployment', 'PodDisruptionBudget'].includes(o.kind)).map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(names.sort()).toEqual(['Deployment/checkout/checkout-api', 'Deployment/default/inflate', 'Namespace//checkout', 'PodDisruptionBudget/checkout/checkout-api', 'PodDisruptionBudget/default/inflate']);
    const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'checkout-api')!;
    expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeLessThanOrEqual(120);
    expect(d.spec.template.spec.containers[0].image).toBe('public.ecr.aws/docker/library/python:3.12-slim');
    expect(environment.warnings.filter((w) => w.includes('workloads'))).toEqual([]);
    for (const o of objects.filter((x) => x.kind !== 'EC2NodeClass' && x.kind !== 'NodePool')) {
      const psa = o.kind === 'Namespace' ? podSecurityLabels('restricted', '1.36') : {};
      expect(o.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': env, ...psa });
      expect(o.metadata.annotations).toEqual({ 'argocd.argoproj.io/sync-wave': '2' });
    }
  });

  it('the example program answers /ready until SIGTERM, as the probe and the README say', () => {
    const text = readFileSync(join(REPO, 'environments', 'prod.yaml'), 'utf8');
    expect(text).toMatch(/EXAMPLE workload/);
    expect(text).toMatch(/self\.path == "\/ready"/);
  });

  it('dev has only inflate', () => {
    expect(build('dev').objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual(['inflate']);
  });
});
