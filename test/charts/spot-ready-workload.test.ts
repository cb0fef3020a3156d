import { Testing, type Chart } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import type { NodePoolConfig } from '../../config/karpenter-schema.js';
import { Inflate } from '../../charts/inflate.js';
import { validateConstructs } from '../support/constructs.js';
import { SpotReadyWorkload, spreadConstraints, toProbe, type SpotReadyWorkloadProps } from '../../charts/spot-ready-workload.js';

type Obj = { kind: string; metadata: Record<string, any>; spec: any };

/** GIVEN props, WHEN the construct is synthesized alone in a chart, THEN these objects come out. */
function build(props: Partial<SpotReadyWorkloadProps>): Chart {
  const chart = Testing.chart();
  new SpotReadyWorkload(chart, 'W', { name: 'api', image: 'example/api:1', ...props });
  return chart;
}
function synth(props: Partial<SpotReadyWorkloadProps> = {}): { deployment: Obj; budget: Obj } {
  const objects = build(props).toJson() as Obj[];
  return { deployment: objects.find((o) => o.kind === 'Deployment')!, budget: objects.find((o) => o.kind === 'PodDisruptionBudget')! };
}
const podSpec = (props: Partial<SpotReadyWorkloadProps> = {}) => synth(props).deployment.spec.template.spec;
const validationErrors = (props: Partial<SpotReadyWorkloadProps>) => {
  try {
    validateConstructs(build(props));
    return [];
  } catch (err) {
    return (err as Error).message.split('\n').slice(1).map((l) => l.trim());
  }
};

const selector = { matchLabels: { 'app.kubernetes.io/name': 'api' } };
const ZONE = { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector };
const CAPACITY = { maxSkew: 1, topologyKey: 'karpenter.sh/capacity-type', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: selector };


/** Without a pool: any node Karpenter launched, never the untainted system node group. */
const KARPENTER_ONLY = {
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'Exists' }] }] } },
};

describe('SpotReadyWorkload with only a name and an image', () => {
  it('emits a Deployment of 2 replicas with probe, native preStop sleep, 45 s grace and spread over zones and capacity types', () => {
    const { deployment } = synth();
    expect(deployment).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api', namespace: 'default', annotations: { 'argocd.argoproj.io/sync-wave': '2' } },
      spec: {
        replicas: 2,
        selector,
        template: {
          metadata: { labels: { 'app.kubernetes.io/name': 'api' } },
          spec: {
            terminationGracePeriodSeconds: 45,
            affinity: KARPENTER_ONLY,
            topologySpreadConstraints: [ZONE, CAPACITY],
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'api',
                image: 'example/api:1',
                ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5, failureThreshold: 2 },
                lifecycle: { preStop: { sleep: { seconds: 10 } } },
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
            ],
          },
        },
      },
    });
  });

  it('emits a PodDisruptionBudget of maxUnavailable 1 with the same selector, name and namespace', () => {
    expect(synth().budget).toEqual({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'api', namespace: 'default', annotations: { 'argocd.argoproj.io/sync-wave': '2' } },
      spec: { maxUnavailable: 1, selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    });
  });

  it('has no nodeSelector, tolerations or pod annotations, and passes validation', () => {
    const spec = podSpec();
    expect([spec.nodeSelector, spec.tolerations, synth().deployment.spec.template.metadata.annotations]).toEqual([undefined, undefined, undefined]);
    expect(validationErrors({})).toEqual([]);
  });
});

describe('SpotReadyWorkload overrides', () => {
  it('sizes the grace period from preStop + drain + 5 s, and an explicit grace period wins', () => {
    expect(podSpec({ preStopSleepSeconds: 5, drainSeconds: 20 }).terminationGracePeriodSeconds).toBe(30);
    expect(podSpec({ preStopSleepSeconds: 5, drainSeconds: 20, terminationGracePeriodSeconds: 90 }).terminationGracePeriodSeconds).toBe(90);
    expect(podSpec({ preStopSleepSeconds: 15 }).containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: 15 } } });
  });

  it('omits the preStop hook at 0 seconds and the probe when it is false', () => {
    const c = podSpec({ preStopSleepSeconds: 0, readinessProbe: false }).containers[0];
    expect([c.lifecycle, c.readinessProbe]).toEqual([undefined, undefined]);
  });

  it('takes any Kubernetes probe as is', () => {
    const probe = { tcpSocket: { port: toProbe({ tcpSocket: { port: 9000 } }).tcpSocket!.port }, periodSeconds: 2 };
    expect(podSpec({ readinessProbe: probe }).containers[0].readinessProbe).toEqual({ tcpSocket: { port: 9000 }, periodSeconds: 2 });
  });

  it('sets replicas, namespace, port, command, args, env and resources', () => {
    const { deployment, budget } = synth({
      replicas: 4,
      namespace: 'shop',
      port: 9090,
      command: ['python'],
      args: ['-m', 'app'],
      env: { LOG_LEVEL: 'info' },
      resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '128Mi' } },
    });
    const c = deployment.spec.template.spec.containers[0];
    expect(deployment.spec.replicas).toBe(4);
    expect([deployment.metadata.namespace, budget.metadata.namespace]).toEqual(['shop', 'shop']);
    expect(c).toMatchObject({
      command: ['python'],
      args: ['-m', 'app'],
      env: [{ name: 'LOG_LEVEL', value: 'info' }],
      ports: [{ name: 'http', containerPort: 9090, protocol: 'TCP' }],
      resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '128Mi' } },
    });
  });

  it('emits minAvailable (number or percentage) instead of maxUnavailable', () => {
    expect(synth({ replicas: 3, disruptionBudget: { minAvailable: 2 } }).budget.spec).toEqual({ minAvailable: 2, selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    expect(synth({ replicas: 4, disruptionBudget: { minAvailable: '50%' } }).budget.spec).toEqual({ minAvailable: '50%', selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    expect(synth({ disruptionBudget: { maxUnavailable: '25%' } }).budget.spec).toEqual({ maxUnavailable: '25%', selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  });

  it('annotates pods karpenter.sh/do-not-disrupt "true" on request, beside other pod annotations', () => {
    expect(synth({ doNotDisrupt: true, podAnnotations: { 'example.com/team': 'checkout' } }).deployment.spec.template.metadata.annotations).toEqual({
      'example.com/team': 'checkout',
      'karpenter.sh/do-not-disrupt': 'true',
    });
    expect(synth({ doNotDisrupt: false }).deployment.spec.template.metadata.annotations).toBeUndefined();
  });

  it('selects a NodePool by karpenter.sh/nodepool and tolerates each of its taints', () => {
    const pool: NodePoolConfig = {
      name: 'batch',
      nodeClass: 'default',
      taints: [
        { key: 'workload-class', value: 'batch', effect: 'NoSchedule' },
        { key: 'dedicated', effect: 'NoExecute' },
      ],
      startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }],
    };
    const spec = podSpec({ nodePool: pool });
    expect(spec.nodeSelector).toEqual({ 'karpenter.sh/nodepool': 'batch' });
    expect(spec.affinity).toBeUndefined();
    // Startup taints are removed by their agent, so they are not tolerated.
    expect(spec.tolerations).toEqual([
      { key: 'workload-class', operator: 'Equal', value: 'batch', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' },
    ]);
  });

  it('pins a capacity type by nodeSelector and then spreads over zones only', () => {
    const spec = podSpec({ nodePool: { name: 'default', nodeClass: 'default' }, capacityType: 'on-demand' });
    expect(spec.nodeSelector).toEqual({ 'karpenter.sh/nodepool': 'default', 'karpenter.sh/capacity-type': 'on-demand' });
    expect(spec.topologySpreadConstraints).toEqual([ZONE]);
  });

  it('emits no spread constraints when topologySpread is false, and no port when port is false', () => {
    const spec = podSpec({ topologySpread: false, port: false, readinessProbe: { exec: { command: ['true'] } } });
    expect([spec.topologySpreadConstraints, spec.containers[0].ports]).toEqual([undefined, undefined]);
  });
});

describe('spreadConstraints', () => {
  it('spreads hard over zones and soft over capacity types, maxSkew 1, selecting the workload pods', () => {
    expect(spreadConstraints({ 'app.kubernetes.io/name': 'api' }, false)).toEqual([ZONE, CAPACITY]);
    expect(spreadConstraints({ 'app.kubernetes.io/name': 'api' }, true)).toEqual([ZONE]);
  });
});

describe('SpotReadyWorkload validation (whole-tree, with the construct path)', () => {
  const never = "a budget that allows no eviction blocks Karpenter's consolidation, drift and expiry of every node running these pods, forever";

  it('refuses minAvailable equal to replicas', () => {
    expect(validationErrors({ replicas: 2, disruptionBudget: { minAvailable: 2 } })).toEqual([
      `[test/W] disruptionBudget.minAvailable must allow at least one of the 2 replicas to be evicted: ${never}, got 2`,
    ]);
  });

  it('refuses minAvailable above replicas and a percentage that rounds up to all of them', () => {
    expect(validationErrors({ replicas: 3, disruptionBudget: { minAvailable: 5 } })).toEqual([
      `[test/W] disruptionBudget.minAvailable must allow at least one of the 3 replicas to be evicted: ${never}, got 5`,
    ]);
    expect(validationErrors({ replicas: 3, disruptionBudget: { minAvailable: '67%' } })).toEqual([
      `[test/W] disruptionBudget.minAvailable must allow at least one of the 3 replicas to be evicted (67% of 3 rounds up to 3): ${never}, got "67%"`,
    ]);
  });

  it('refuses maxUnavailable 0 and 0%', () => {
    expect(validationErrors({ disruptionBudget: { maxUnavailable: 0 } })).toEqual([
      `[test/W] disruptionBudget.maxUnavailable must allow at least one of the 2 replicas to be evicted: ${never}, got 0`,
    ]);
    expect(validationErrors({ disruptionBudget: { maxUnavailable: '0%' } })).toEqual([
      `[test/W] disruptionBudget.maxUnavailable must allow at least one of the 2 replicas to be evicted (0% of 2 rounds up to 0): ${never}, got "0%"`,
    ]);
  });

  it('accepts the tightest budgets that still allow one eviction', () => {
    expect(validationErrors({ replicas: 3, disruptionBudget: { minAvailable: '66%' } })).toEqual([]);
    expect(validationErrors({ replicas: 3, disruptionBudget: { minAvailable: 2 } })).toEqual([]);
    expect(validationErrors({ replicas: 2, disruptionBudget: { maxUnavailable: '1%' } })).toEqual([]);
  });

  it('accepts any budget at 0 replicas: nothing runs, nothing blocks a drain', () => {
    expect(validationErrors({ replicas: 0, disruptionBudget: { minAvailable: 5 } })).toEqual([]);
    expect(validationErrors({ replicas: 0, disruptionBudget: { maxUnavailable: 0 } })).toEqual([]);
  });

  it('refuses a budget with both or neither field', () => {
    expect(validationErrors({ disruptionBudget: { maxUnavailable: 1, minAvailable: 1 } })).toEqual([
      '[test/W] disruptionBudget must set exactly one of maxUnavailable or minAvailable, got {"maxUnavailable":1,"minAvailable":1}',
    ]);
    expect(validationErrors({ disruptionBudget: {} })).toEqual(['[test/W] disruptionBudget must set exactly one of maxUnavailable or minAvailable, got {}']);
  });

  it('refuses a preStop sleep longer than the grace period (the API server would too)', () => {
    expect(validationErrors({ preStopSleepSeconds: 30, terminationGracePeriodSeconds: 20 })).toEqual([
      '[test/W] terminationGracePeriodSeconds must be at least preStopSleepSeconds (30): the preStop hook runs inside the grace period, got 20',
    ]);
  });

  it('refuses port false without a probe decision', () => {
    expect(validationErrors({ port: false })).toEqual([
      '[test/W] readinessProbe must be set (or false) when port is false: the default probe targets the port, got nothing',
    ]);
  });

  it('reports every problem at once', () => {
    expect(validationErrors({ port: false, disruptionBudget: { maxUnavailable: 0 }, preStopSleepSeconds: 60, terminationGracePeriodSeconds: 1 })).toHaveLength(3);
  });
});

describe('Inflate, expressed with SpotReadyWorkload', () => {
  it('keeps the SPEC 2 values and nothing a pause container cannot use', () => {
    const chart = Testing.chart();
    new Inflate(chart, 'Inflate');
    validateConstructs(chart);
    const [deployment, budget] = chart.toJson() as Obj[];
    expect(deployment!.metadata).toEqual({ name: 'inflate', namespace: 'default', annotations: { 'argocd.argoproj.io/sync-wave': '2' } });
    expect(deployment!.spec).toEqual({
      replicas: 0,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'inflate' } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': 'inflate' } },
        spec: {
          terminationGracePeriodSeconds: 0,
          affinity: KARPENTER_ONLY,
          // Pod Security "restricted", with the pause image's own uid so runAsNonRoot lets it start.
          securityContext: { runAsNonRoot: true, runAsUser: 65535, runAsGroup: 65535, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'inflate',
              image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.7',
              resources: { requests: { cpu: '1' } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    });
    expect(budget!.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'inflate' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  });
});
