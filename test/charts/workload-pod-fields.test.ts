import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/errors.js';
import { parseEnvironment } from '../../config/environment.js';
import { podSecurityLabels } from '../../config/pod-security.js';
import { DOC_WORKLOADS, EXAMPLE_POOLS, examplesText, FILE, GAP_WORKLOADS, synthExamples, type Obj } from '../fixtures/workload-examples.js';

/** The pod template the Deployment of workload `name` carries. */
function template(objects: Obj[], name: string): { metadata: any; spec: any } {
  const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (!d) throw new Error(`no Deployment ${name}`);
  return d.spec.template;
}
function errorsFor(workloads: unknown[], pools: readonly unknown[] = EXAMPLE_POOLS): string[] {
  try {
    parseEnvironment(FILE, examplesText(workloads, pools));
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected a ConfigError, got none');
}
const warningsFor = (workloads: unknown[]) => parseEnvironment(FILE, examplesText(workloads)).warnings;
const api = { name: 'api', image: 'example/api:1' };
const KARPENTER_ONLY = { key: 'karpenter.sh/nodepool', operator: 'Exists' };
const spreadOf = (name: string) => ({ matchLabels: { 'app.kubernetes.io/name': name } });
const ZONE = (name: string) => ({ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: spreadOf(name) });
const CAPACITY = (name: string) => ({ maxSkew: 1, topologyKey: 'karpenter.sh/capacity-type', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: spreadOf(name) });

describe('issue 13 gaps: each config is now accepted, and the pods get exactly this', () => {
  const { environment, objects } = synthExamples();

  it('GIVEN nodeSelector arch arm64 THEN the pods select arm64 (merged with nothing else: no pool named)', () => {
    expect(template(objects, 'arm64-only').spec.nodeSelector).toEqual({ 'kubernetes.io/arch': 'arm64' });
  });

  it('GIVEN a preferred node affinity (prefer arm64) THEN it is kept, and the required Karpenter-nodes-only term stays', () => {
    expect(template(objects, 'prefer-arm64').spec.affinity).toEqual({
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] } }],
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [KARPENTER_ONLY] }] },
      },
    });
  });

  it('GIVEN spreads by hostname and zone THEN the zone one replaces the default zone spread, the capacity-type default stays, and both select the workload', () => {
    expect(template(objects, 'spread-host-and-zone').spec.topologySpreadConstraints).toEqual([
      CAPACITY('spread-host-and-zone'),
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: spreadOf('spread-host-and-zone') },
      { maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: spreadOf('spread-host-and-zone') },
    ]);
  });

  it('GIVEN priorityClassName THEN the pods carry it', () => {
    expect(template(objects, 'critical').spec.priorityClassName).toBe('business-critical');
  });

  it('GIVEN pod and container securityContext, serviceAccountName, env with valueFrom, labels and annotations THEN merged over the defaults field by field', () => {
    const t = template(objects, 'hardened');
    expect(t.metadata).toEqual({ labels: { 'example.com/team': 'payments', 'app.kubernetes.io/name': 'hardened' }, annotations: { 'example.com/owner': 'payments@example.com' } });
    expect(t.spec.serviceAccountName).toBe('hardened');
    expect(t.spec.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001 });
    expect(t.spec.containers[0].securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
    expect(t.spec.containers[0].env).toEqual([
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
    ]);
  });

  it('GIVEN replicas 1 on an On-Demand-only pool THEN the warning names what can take its node, and Spot is not among them', () => {
    expect(environment.warnings).toEqual([
      `${FILE}: workloads[5] "on-demand-single": replicas 1: every consolidation, drift or expiry of its node is an outage; run 2 or more`,
    ]);
    expect(warningsFor([{ ...api, replicas: 1, nodePool: 'teams' }])).toEqual([
      `${FILE}: workloads[0] "api": replicas 1: every Spot reclaim, consolidation or drift of its node is an outage; run 2 or more`,
    ]);
  });

  it('GIVEN a long grace period THEN the Spot-notice warning names only the Spot pools its selectors reach, and none when they reach On-Demand only', () => {
    // Only "graviton" (On-Demand) carries this label; arm64 alone would also reach the Spot pools, which do not restrict arch.
    expect(warningsFor([{ ...api, terminationGracePeriodSeconds: 300, nodeSelector: { 'example.com/cpu': 'graviton' } }])).toEqual([]);
    expect(warningsFor([{ ...api, terminationGracePeriodSeconds: 300, nodeSelector: { 'company.com/team': 'a' } }])).toEqual([
      `${FILE}: workloads[0] "api": terminationGracePeriodSeconds 300 s (preStop included) is longer than the 120 s Spot interruption notice, and NodePool "teams" can launch Spot: ` +
        'EC2 reclaims the instance 120 s after the notice whether or not the pod has finished, so the end of its drain never happens; ' +
        'keep terminationGracePeriodSeconds (default preStopSleepSeconds + drainSeconds + 5) at most 120 s, or set capacityType: on-demand',
    ]);
  });

  it('GIVEN the workloads\' namespace THEN it is emitted enforcing Pod Security "restricted", pinned to the cluster minor', () => {
    const ns = objects.find((o) => o.kind === 'Namespace' && o.metadata.name === 'examples')!;
    expect(ns.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'v1.36',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/warn-version': 'latest',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
  });

  it('every example comes out with the restricted defaults', () => {
    for (const w of [...GAP_WORKLOADS, ...DOC_WORKLOADS]) {
      const t = template(objects, w.name);
      expect(t.spec.securityContext, w.name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(t.spec.containers[0].securityContext, w.name).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    }
  });
});

describe("Karpenter's scheduling.md examples as environment workloads: the fields Kubernetes receives are the docs' own", () => {
  const { objects } = synthExamples();

  it.each(DOC_WORKLOADS.map((w) => [w.name, w] as const))('%s', (name, w) => {
    const spec = template(objects, name).spec;
    const own = w as Record<string, any>;
    if (own.nodeSelector) expect(spec.nodeSelector).toEqual(own.nodeSelector);
    if (own.affinity?.podAffinity) expect(spec.affinity.podAffinity).toEqual(own.affinity.podAffinity);
    if (own.affinity?.podAntiAffinity) expect(spec.affinity.podAntiAffinity).toEqual(own.affinity.podAntiAffinity);
    if (own.affinity?.nodeAffinity) {
      // Each term as written, plus "only nodes Karpenter launched" (no pool is named).
      expect(spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual(
        own.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.map((t: any) => ({ matchExpressions: [...t.matchExpressions, KARPENTER_ONLY] })),
      );
    }
    for (const c of own.topologySpreadConstraints ?? []) {
      expect(spec.topologySpreadConstraints).toContainEqual({ labelSelector: spreadOf(name), ...c });
    }
  });

  it('the docs\' three spreads replace both defaults (same topology keys)', () => {
    expect(template(objects, 'doc-topology-spread').spec.topologySpreadConstraints.map((c: any) => c.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
      'karpenter.sh/capacity-type',
    ]);
  });

  it('the ratio split keeps the default spreads and adds capacity-spread', () => {
    expect(template(objects, 'doc-ratio-split').spec.topologySpreadConstraints).toEqual([
      ZONE('doc-ratio-split'),
      CAPACITY('doc-ratio-split'),
      { maxSkew: 1, topologyKey: 'capacity-spread', whenUnsatisfiable: 'DoNotSchedule', labelSelector: spreadOf('doc-ratio-split') },
    ]);
  });
});

describe('selectors no NodePool can satisfy', () => {
  it('GIVEN nodeSelector arm64 on the amd64 pool THEN an error naming the pool and why', () => {
    expect(errorsFor([{ ...api, nodePool: 'general', nodeSelector: { 'kubernetes.io/arch': 'arm64' } }])).toEqual([
      `${FILE}: workloads[0].nodeSelector: must match nodes some NodePool can launch; none can: NodePool "general": kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64], got {"kubernetes.io/arch":"arm64"}`,
    ]);
  });

  it('GIVEN a custom label no pool defines THEN an error naming every pool it may use', () => {
    expect(errorsFor([{ ...api, nodeSelector: { 'example.com/gpu': 'a100' } }])).toEqual([
      `${FILE}: workloads[0].nodeSelector: must match nodes some NodePool can launch; none can: ` +
        ['general', 'graviton', 'teams', 'spot', 'on-demand'].map((p) => `NodePool "${p}": label "example.com/gpu" does not have known values`).join('; ') +
        ', got {"example.com/gpu":"a100"}',
    ]);
  });

  it('GIVEN a pool label or an Exists requirement THEN a selector on it is satisfiable', () => {
    expect(() => parseEnvironment(FILE, examplesText([{ ...api, nodeSelector: { 'example.com/cpu': 'graviton' } }]))).not.toThrow();
    expect(() => parseEnvironment(FILE, examplesText([{ ...api, nodeSelector: { 'company.com/team': 'anything' } }]))).not.toThrow();
  });

  it('GIVEN a required affinity whose every term fails THEN an error at the affinity, term by term', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'capacity-spread', operator: 'Gt', values: ['5'] }] },
            { matchExpressions: [{ key: 'capacity-spread', operator: 'Lt', values: ['1'] }] },
          ],
        },
      },
    };
    const pools = EXAMPLE_POOLS.filter((p) => p.name === 'spot' || p.name === 'on-demand');
    expect(errorsFor([{ ...api, affinity }], pools)).toEqual([
      `${FILE}: workloads[0].affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: must match nodes some NodePool can launch; none can: ` +
        'NodePool "spot": term 0: capacity-spread Exists >=6 not in capacity-spread In [2 3 4 5], term 1: capacity-spread Exists <=0 not in capacity-spread In [2 3 4 5]; ' +
        'NodePool "on-demand": term 0: capacity-spread Exists >=6 not in capacity-spread In [1], term 1: capacity-spread Exists <=0 not in capacity-spread In [1], ' +
        'got {"nodeSelectorTerms":[{"matchExpressions":[{"key":"capacity-spread","operator...',
    ]);
  });

  it('GIVEN one satisfiable term THEN no error (terms are ORed)', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'capacity-spread', operator: 'Gt', values: ['5'] }] }, { matchExpressions: [{ key: 'capacity-spread', operator: 'Gt', values: ['4'] }] }],
        },
      },
    };
    expect(() => parseEnvironment(FILE, examplesText([{ ...api, affinity }]))).not.toThrow();
  });

  it('GIVEN a preferred affinity no pool can satisfy THEN a warning, not an error', () => {
    const affinity = {
      nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] } }] },
    };
    expect(warningsFor([{ ...api, nodePool: 'general', affinity }])).toEqual([
      `${FILE}: workloads[0] "api": affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]: no NodePool it may use can launch such a node, so the preference never applies: ` +
        'NodePool "general": kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]',
    ]);
  });

  it('GIVEN a nodeSelector contradicting capacityType THEN an error at the key', () => {
    expect(errorsFor([{ ...api, nodePool: 'general', capacityType: 'spot', nodeSelector: { 'karpenter.sh/capacity-type': 'on-demand' } }])).toEqual([
      `${FILE}: workloads[0].nodeSelector["karpenter.sh/capacity-type"]: must not contradict capacityType "spot": no node has both, got "on-demand"`,
    ]);
  });
});

describe('bad pod fields', () => {
  it('GIVEN podLabels overriding the selector label THEN an error', () => {
    expect(errorsFor([{ ...api, podLabels: { 'app.kubernetes.io/name': 'other' } }])).toEqual([
      `${FILE}: workloads[0].podLabels["app.kubernetes.io/name"]: must not be set: it is the Deployment's selector, always the workload's name ("api"), got "other"`,
    ]);
  });

  it('GIVEN a misspelt Kubernetes field THEN the allowed names are listed', () => {
    expect(errorsFor([{ ...api, affinity: { nodeAfinity: {} } }])).toEqual([`${FILE}: workloads[0].affinity: unknown field "nodeAfinity"; allowed: nodeAffinity, podAffinity, podAntiAffinity`]);
  });

  it('GIVEN an env list naming a variable twice THEN an error at the second (the API server would keep only the last)', () => {
    expect(errorsFor([{ ...api, env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }] }])).toEqual([
      `${FILE}: workloads[0].env[1].name: must be unique; "A" is already set at index 0, and only the last one would apply, got "A"`,
    ]);
  });

  it('GIVEN an empty env list THEN no env is written (the API server drops it; written out it would be drift)', () => {
    expect(template(synthExamples(examplesText([{ ...api, env: [] }])).objects, 'api').spec.containers[0].env).toBeUndefined();
  });

  it('GIVEN a topology spread with a bad whenUnsatisfiable THEN the allowed values', () => {
    expect(errorsFor([{ ...api, topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'Never' }] }])).toEqual([
      `${FILE}: workloads[0].topologySpreadConstraints[0].whenUnsatisfiable: must be one of "DoNotSchedule", "ScheduleAnyway", got "Never"`,
    ]);
  });
});

describe('secure by default, relaxable explicitly', () => {
  it('GIVEN a privileged container under the default level THEN an error saying how to relax it', () => {
    expect(errorsFor([{ ...api, securityContext: { privileged: true } }])).toEqual([
      `${FILE}: workloads[0].securityContext.privileged: must not be true under Pod Security "restricted", or set podSecurity to a looser level (baseline or privileged) for this workload, got true`,
    ]);
  });

  it('GIVEN runAsNonRoot false and escalation allowed THEN one error per field', () => {
    expect(errorsFor([{ ...api, podSecurityContext: { runAsNonRoot: false }, securityContext: { allowPrivilegeEscalation: true } }])).toEqual([
      `${FILE}: workloads[0].podSecurityContext.runAsNonRoot: must be true under Pod Security "restricted", or set podSecurity to a looser level (baseline or privileged) for this workload, got false`,
      `${FILE}: workloads[0].securityContext.allowPrivilegeEscalation: must be false under Pod Security "restricted", or set podSecurity to a looser level (baseline or privileged) for this workload, got true`,
    ]);
  });

  it('GIVEN podSecurity baseline THEN root is allowed, and the namespace enforces baseline', () => {
    const w = { ...api, namespace: 'legacy', podSecurity: 'baseline', podSecurityContext: { runAsNonRoot: false } };
    const { objects } = synthExamples(examplesText([w, { ...api, name: 'api2', namespace: 'legacy' }]));
    expect(objects.find((o) => o.kind === 'Namespace')!.metadata.labels).toEqual({
      'app.kubernetes.io/managed-by': 'karpenter-gitops',
      'karpenter-gitops/environment': 'examples',
      ...podSecurityLabels('baseline', '1.36'),
    });
    expect(template(objects, 'api').spec.securityContext).toEqual({ runAsNonRoot: false, seccompProfile: { type: 'RuntimeDefault' } });
  });

  it('GIVEN podSecurity baseline THEN a privileged container is still refused; privileged allows it', () => {
    expect(errorsFor([{ ...api, podSecurity: 'baseline', securityContext: { privileged: true } }])).toEqual([
      `${FILE}: workloads[0].securityContext.privileged: must not be true under Pod Security "baseline", or set podSecurity to a looser level (privileged) for this workload, got true`,
    ]);
    expect(() => parseEnvironment(FILE, examplesText([{ ...api, podSecurity: 'privileged', securityContext: { privileged: true, allowPrivilegeEscalation: true } }]))).not.toThrow();
  });
});
