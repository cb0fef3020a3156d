import { z } from 'zod';
import { objectName, quantity, strict } from './schema-kit.js';

/**
 * `review:` in an environment file: the thresholds and assumptions of `npm run analyze`
 * and `reports/<env>.md`. Every field has a default, so most environments omit it.
 */

/**
 * What the EKS add-ons every Karpenter node runs request, per node, by default:
 * - aws-node (Amazon VPC CNI): cpu 25m, from the chart's values.yaml
 *   (aws/amazon-vpc-cni-k8s charts/aws-vpc-cni, `resources.requests.cpu: 25m`);
 * - kube-proxy: cpu 100m, the EKS kube-proxy add-on's DaemonSet request;
 * - eks-pod-identity-agent: no requests (aws/eks-charts stable/eks-pod-identity-agent
 *   values.yaml has `resources: {}`), but it takes a pod slot.
 * Override with your real DaemonSets (log shippers, CSI drivers, monitoring agents).
 */
export const DEFAULT_DAEMONSETS = [
  { name: 'aws-node', cpu: '25m', memory: '0' },
  { name: 'kube-proxy', cpu: '100m', memory: '0' },
  { name: 'eks-pod-identity-agent', cpu: '0', memory: '0' },
];

export const reviewSchema = strict({
  /**
   * A Spot pool admitting fewer instance types than this gets a warning. AWS's Spot best
   * practices ask for flexibility across at least 10 instance types per workload.
   */
  spotMinTypes: z.number().int().min(1).default(10),
  /** A Spot pool admitting fewer instance families than this gets a warning. */
  spotMinFamilies: z.number().int().min(1).default(3),
  /** Admitted types with less memory than this get a warning. */
  memoryFloor: quantity.default('2Gi'),
  /** DaemonSets on every node: their requests and one pod slot each are reserved before workloads fit. */
  daemonSets: z.array(strict({ name: objectName, cpu: quantity.default('0'), memory: quantity.default('0') })).default(DEFAULT_DAEMONSETS),
}).prefault({});

export type ReviewConfig = z.infer<typeof reviewSchema>;
