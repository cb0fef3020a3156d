import { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-30';
import type { Construct } from 'constructs';
import type { LoadedEnvironment } from '../config/environment.js';
import type { InfraOutputs } from '../config/outputs.js';
import { KarpenterNodeClass } from './ec2-node-class.js';
import { Inflate } from './inflate.js';
import { loosestLevel, podSecurityLabels } from '../config/pod-security.js';
import { commonLabels, SYNC_WAVE, syncWave } from './metadata.js';
import { KarpenterNodeOverlay } from './node-overlay.js';
import { KarpenterNodePool } from './node-pool.js';
import { SpotReadyWorkload, toProbe } from './spot-ready-workload.js';

export interface EnvironmentChartProps {
  readonly environment: LoadedEnvironment;
  readonly outputs: InfraOutputs;
}

const BUILT_IN_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * Everything `dist/<env>/` holds for one environment. The chart id is `Environment-<name>`,
 * never the bare name: the constructs library keeps children in a plain object, where an
 * environment named `constructor` would clash with Object.prototype's.
 */
export class EnvironmentChart extends Chart {
  constructor(scope: Construct, props: EnvironmentChartProps) {
    const { environment, outputs } = props;
    super(scope, `Environment-${environment.name}`, { labels: commonLabels(environment.name) });
    const { config } = environment;
    for (const nodeClass of config.nodeClasses) {
      new KarpenterNodeClass(this, `NodeClass-${nodeClass.name}`, {
        config: nodeClass,
        clusterName: config.cluster.name,
        nodeRoleName: outputs.nodeRoleName,
      });
    }
    for (const pool of config.nodePools) {
      new KarpenterNodePool(this, `NodePool-${pool.name}`, { config: pool });
    }
    for (const overlay of config.nodeOverlays) {
      new KarpenterNodeOverlay(this, `NodeOverlay-${overlay.name}`, { config: overlay });
    }
    new Inflate(this, 'Inflate');
    // Namespaces the cluster does not have from the start; Argo CD applies Namespaces first within a wave.
    const namespaces = new Set(config.workloads.map((w) => w.namespace).filter((ns) => ns !== undefined && !BUILT_IN_NAMESPACES.includes(ns)));
    for (const ns of [...namespaces].sort()) {
      // Pod Security Admission: `restricted` unless a workload here says it needs less (podSecurity).
      const level = loosestLevel(config.workloads.filter((w) => w.namespace === ns).map((w) => w.podSecurity ?? 'restricted'));
      new k8s.KubeNamespace(this, `Namespace-${ns}`, {
        metadata: { name: ns, labels: podSecurityLabels(level, config.cluster.kubernetesVersion), annotations: syncWave(SYNC_WAVE.workload) },
      });
    }
    for (const w of config.workloads) {
      const { nodePool, readinessProbe, ...rest } = w;
      new SpotReadyWorkload(this, `Workload-${w.name}`, {
        ...rest,
        readinessProbe: readinessProbe && toProbe(readinessProbe),
        nodePool: config.nodePools.find((p) => p.name === nodePool),
      });
    }
  }
}
