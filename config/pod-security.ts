import type { k8s } from 'cdk8s-plus-30';
import type { PodSecurityContextConfig, SecurityContextConfig } from './pod-spec-schema.js';

/**
 * Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/):
 * the levels the Namespaces synth emits enforce, the defaults that make every workload
 * pass `restricted`, and the checks of those defaults as a workload overrides them, so a
 * relaxed field is an error here, naming it, rather than pods the API server refuses later.
 */

export const POD_SECURITY_LEVELS = ['restricted', 'baseline', 'privileged'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/** The loosest of some levels: a Namespace must admit every workload in it. */
export function loosestLevel(levels: readonly PodSecurityLevel[]): PodSecurityLevel {
  return POD_SECURITY_LEVELS[Math.max(0, ...levels.map((l) => POD_SECURITY_LEVELS.indexOf(l)))]!;
}

/**
 * Pod Security Admission labels of a Namespace. `enforce` is pinned to the cluster's
 * Kubernetes minor so an upgrade never starts refusing pods by itself; `warn` and
 * `audit` follow the newest policy, so `kubectl apply` says what the next one would refuse.
 */
export function podSecurityLabels(level: PodSecurityLevel, kubernetesVersion: string): Record<string, string> {
  return {
    'pod-security.kubernetes.io/enforce': level,
    'pod-security.kubernetes.io/enforce-version': `v${kubernetesVersion}`,
    'pod-security.kubernetes.io/warn': level,
    'pod-security.kubernetes.io/warn-version': 'latest',
    'pod-security.kubernetes.io/audit': level,
    'pod-security.kubernetes.io/audit-version': 'latest',
  };
}

/** Pod-level defaults: `restricted` needs non-root and a seccomp profile. */
export const DEFAULT_POD_SECURITY_CONTEXT = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } as const satisfies PodSecurityContextConfig;
/** Container-level defaults: `restricted` needs no privilege escalation and every capability dropped. */
export const DEFAULT_CONTAINER_SECURITY_CONTEXT = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } as const satisfies SecurityContextConfig;

/** The workload's own fields win one by one (a whole `capabilities` or `seccompProfile` replaces the default's). */
export function podSecurityContext(own?: k8s.PodSecurityContext): k8s.PodSecurityContext {
  return { ...DEFAULT_POD_SECURITY_CONTEXT, ...own };
}
export function containerSecurityContext(own?: k8s.SecurityContext): k8s.SecurityContext {
  return { ...DEFAULT_CONTAINER_SECURITY_CONTEXT, ...own };
}

/** Capabilities `baseline` lets a container add (the container runtime's default set). */
const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

export interface PodSecurityViolation {
  /** `podSecurityContext.x` or `securityContext.x`, relative to the workload. */
  readonly path: readonly string[];
  readonly message: string;
  readonly value: unknown;
}

/**
 * What the merged contexts break at `level`, field by field, as PodSecurity admission
 * judges them (the container's field overrides the pod's). `privileged` breaks nothing.
 */
export function podSecurityViolations(level: PodSecurityLevel, pod: k8s.PodSecurityContext, container: k8s.SecurityContext): PodSecurityViolation[] {
  if (level === 'privileged') return [];
  const out: PodSecurityViolation[] = [];
  const fix = `, or set podSecurity to a looser level (${level === 'restricted' ? 'baseline or privileged' : 'privileged'}) for this workload`;
  const at = (scope: 'pod' | 'container', field: string) => [scope === 'pod' ? 'podSecurityContext' : 'securityContext', ...field.split('.')];
  // baseline
  if (container.privileged === true) out.push({ path: at('container', 'privileged'), message: `must not be true under Pod Security "${level}"${fix}`, value: true });
  const added = container.capabilities?.add ?? [];
  const allowedAdds = level === 'restricted' ? new Set(['NET_BIND_SERVICE']) : BASELINE_CAPABILITIES;
  const badAdds = added.filter((c) => !allowedAdds.has(c));
  if (badAdds.length > 0) {
    out.push({ path: at('container', 'capabilities.add'), message: `may only add ${[...allowedAdds].join(', ')} under Pod Security "${level}"${fix}`, value: added });
  }
  if (container.procMount === 'Unmasked') out.push({ path: at('container', 'procMount'), message: `must be Default under Pod Security "${level}"${fix}`, value: 'Unmasked' });
  for (const [scope, ctx] of [['pod', pod], ['container', container]] as const) {
    if (ctx.windowsOptions?.hostProcess === true) out.push({ path: at(scope, 'windowsOptions.hostProcess'), message: `must not be true under Pod Security "${level}"${fix}`, value: true });
    if (ctx.seccompProfile?.type === 'Unconfined') out.push({ path: at(scope, 'seccompProfile.type'), message: `must be RuntimeDefault or Localhost under Pod Security "${level}"${fix}`, value: 'Unconfined' });
    if (ctx.appArmorProfile?.type === 'Unconfined') out.push({ path: at(scope, 'appArmorProfile.type'), message: `must be RuntimeDefault or Localhost under Pod Security "${level}"${fix}`, value: 'Unconfined' });
    const se = ctx.seLinuxOptions;
    if (se && (se.user !== undefined || se.role !== undefined || (se.type !== undefined && !['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'].includes(se.type)))) {
      out.push({ path: at(scope, 'seLinuxOptions'), message: `may only set type container_t, container_init_t, container_kvm_t or container_engine_t (and level) under Pod Security "${level}"${fix}`, value: se });
    }
  }
  const unsafe = (pod.sysctls ?? []).filter((s) => !SAFE_SYSCTLS.has(s.name)).map((s) => s.name);
  if (unsafe.length > 0) out.push({ path: at('pod', 'sysctls'), message: `may only set the safe sysctls (${[...SAFE_SYSCTLS].join(', ')}) under Pod Security "${level}"${fix}`, value: unsafe });
  if (level === 'baseline') return out;
  // restricted
  if ((container.runAsNonRoot ?? pod.runAsNonRoot) !== true) {
    const scope = container.runAsNonRoot === false ? 'container' : 'pod';
    out.push({ path: at(scope, 'runAsNonRoot'), message: `must be true under Pod Security "restricted"${fix}`, value: scope === 'container' ? container.runAsNonRoot : pod.runAsNonRoot });
  }
  for (const [scope, ctx] of [['pod', pod], ['container', container]] as const) {
    if (ctx.runAsUser === 0) out.push({ path: at(scope, 'runAsUser'), message: `must not be 0 (root) under Pod Security "restricted"${fix}`, value: 0 });
  }
  if ((container.seccompProfile ?? pod.seccompProfile) === undefined) {
    out.push({ path: at('pod', 'seccompProfile'), message: `must be {type: RuntimeDefault} or Localhost under Pod Security "restricted"${fix}`, value: undefined });
  }
  if (container.allowPrivilegeEscalation !== false) {
    out.push({ path: at('container', 'allowPrivilegeEscalation'), message: `must be false under Pod Security "restricted"${fix}`, value: container.allowPrivilegeEscalation });
  }
  if (!(container.capabilities?.drop ?? []).includes('ALL')) {
    out.push({ path: at('container', 'capabilities.drop'), message: `must include ALL under Pod Security "restricted"${fix}`, value: container.capabilities?.drop });
  }
  return out;
}
