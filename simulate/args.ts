import { describeValue } from '../config/errors.js';
import { quantity } from '../config/schema-kit.js';
import type { PodSource } from './inputs.js';

/** Flags of `npm run simulate`, checked: errors say "must be X, got Y". */

/** Bad command-line flags: printed with the usage line. */
export class UsageError extends Error {}

export function count(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${flag} must be an integer of at least ${min}, got ${describeValue(value)}`);
  return Number(value);
}

function qty(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!quantity.safeParse(value).success) throw new UsageError(`--${flag} must be a Kubernetes quantity such as 1, 500m or 1.5Gi, got ${describeValue(value)}`);
  return value;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, got ${describeValue(value)}`);
  return value as T;
}

/** Pods from the flags: ad hoc when --pods is given, else Deployments of dist/<env>/. */
export function podSourceFrom(v: Record<string, string | string[] | boolean | undefined>): PodSource {
  const adhocFlags = ['cpu', 'memory', 'arch', 'spread'].filter((f) => v[f] !== undefined);
  if (v['pods'] !== undefined) {
    if (v['workload'] !== undefined || v['replicas'] !== undefined) throw new UsageError('--pods makes up pods; it cannot be combined with --workload or --replicas');
    const cpu = qty('cpu', v['cpu'] as string | undefined);
    if (cpu === undefined) throw new UsageError('--pods needs --cpu (the request of each pod)');
    const memory = qty('memory', v['memory'] as string | undefined);
    const arch = oneOf('arch', v['arch'] as string | undefined, ['amd64', 'arm64']);
    const spread = oneOf('spread', v['spread'] as string | undefined, ['zone', 'hostname']);
    return { kind: 'adhoc', pods: count('pods', v['pods'] as string, 1)!, cpu, ...(memory && { memory }), ...(arch && { arch }), ...(spread && { spread }) };
  }
  if (adhocFlags.length > 0) throw new UsageError(`--${adhocFlags[0]} describes made-up pods and needs --pods`);
  const names = v['workload'] as string[] | undefined;
  const replicas = count('replicas', v['replicas'] as string | undefined, 0);
  if (replicas !== undefined && names === undefined) throw new UsageError('--replicas needs --workload (which Deployment to scale)');
  return { kind: 'deployments', ...(names && { names }), ...(replicas !== undefined && { replicas }) };
}

