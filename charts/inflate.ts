import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-30';
import { SYNC_WAVE, syncWave } from './metadata.js';

/** SPEC 2: the test workload of Karpenter's getting-started guide. Scale it up to watch nodes appear. */
export const INFLATE = {
  name: 'inflate',
  namespace: 'default',
  image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.7',
  replicas: 0,
  cpuRequest: '1',
  terminationGracePeriodSeconds: 0,
} as const;

/**
 * The `inflate` Deployment (0 replicas: `kubectl scale deployment inflate --replicas 5`
 * makes Karpenter launch capacity) and its PodDisruptionBudget.
 */
export class Inflate extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    const selector = { 'app.kubernetes.io/name': INFLATE.name };
    new k8s.KubeDeployment(this, 'Deployment', {
      metadata: { name: INFLATE.name, namespace: INFLATE.namespace, annotations: syncWave(SYNC_WAVE.workload) },
      spec: {
        replicas: INFLATE.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: selector },
          spec: {
            terminationGracePeriodSeconds: INFLATE.terminationGracePeriodSeconds,
            containers: [
              {
                name: INFLATE.name,
                image: INFLATE.image,
                resources: { requests: { cpu: k8s.Quantity.fromString(INFLATE.cpuRequest) } },
                securityContext: { allowPrivilegeEscalation: false },
              },
            ],
          },
        },
      },
    });
    // One pod at a time: consolidation can still empty a node, never all replicas at once.
    new k8s.KubePodDisruptionBudget(this, 'Budget', {
      metadata: { name: INFLATE.name, namespace: INFLATE.namespace, annotations: syncWave(SYNC_WAVE.workload) },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
    });
  }
}
