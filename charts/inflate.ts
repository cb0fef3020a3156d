import type { Construct } from 'constructs';
import { SpotReadyWorkload } from './spot-ready-workload.js';

/** SPEC 2: the test workload of Karpenter's getting-started guide. Scale it up to watch nodes appear. */
export const INFLATE = {
  name: 'inflate',
  namespace: 'default',
  image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.7',
  replicas: 0,
  cpuRequest: '1',
  terminationGracePeriodSeconds: 0,
  /**
   * The pause image's own user (its Dockerfile says `USER 65535:65535`), said again here so
   * that runAsNonRoot never depends on how a mirror rebuilt the image: the kubelet refuses
   * to start a runAsNonRoot container whose image user is root or not numeric.
   */
  runAsUser: 65535,
} as const;

/**
 * The `inflate` Deployment (0 replicas: `kubectl scale deployment inflate --replicas 5`
 * makes Karpenter launch capacity) and its PodDisruptionBudget (one pod at a time).
 * The pause container serves nothing and exits at once, so it has no port, probe or
 * preStop, and no spread: it should pack onto as few nodes as the guide shows.
 */
export class Inflate extends SpotReadyWorkload {
  constructor(scope: Construct, id: string) {
    super(scope, id, {
      name: INFLATE.name,
      namespace: INFLATE.namespace,
      image: INFLATE.image,
      replicas: INFLATE.replicas,
      resources: { requests: { cpu: INFLATE.cpuRequest } },
      terminationGracePeriodSeconds: INFLATE.terminationGracePeriodSeconds,
      port: false,
      readinessProbe: false,
      preStopSleepSeconds: 0,
      topologySpread: false,
      podSecurityContext: { runAsUser: INFLATE.runAsUser, runAsGroup: INFLATE.runAsUser },
    });
  }
}
