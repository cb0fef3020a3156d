import { z } from 'zod';
import type { k8s } from 'cdk8s-plus-30';
import { labelKey, labelValue, strict } from './schema-kit.js';

/**
 * Pod and container fields of a workload in Kubernetes' own names and shapes (what
 * `kubectl explain pod.spec` shows), as zod schemas. Each inferred type is checked
 * below against the `cdk8s-plus-30` k8s type it stands for, so a field spelled or shaped
 * differently from Kubernetes is a compile error, not a silently dropped key.
 */

const NODE_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;
const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });

/** The checks the API server makes on a node selector requirement (ValidateNodeSelectorRequirement). */
function operatorValues(r: { operator: string; values?: string[] | undefined }, ctx: z.core.$RefinementCtx<unknown>): void {
  const values = r.values ?? [];
  if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must list at least one value for operator ${r.operator}`, input: r.values });
  }
  if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must be empty for operator ${r.operator}`, input: r.values });
  }
  if ((r.operator === 'Gt' || r.operator === 'Lt') && (values.length !== 1 || !/^-?[0-9]+$/.test(values[0]!))) {
    ctx.addIssue({ code: 'custom', path: ['values'], message: `must be a single integer for operator ${r.operator}`, input: r.values });
  }
}

export const nodeSelectorRequirementSchema = strict({
  key: labelKey,
  operator: oneOf(NODE_SELECTOR_OPERATORS),
  values: z.array(labelValue).optional(),
}).superRefine(operatorValues);
export type NodeSelectorRequirementConfig = z.infer<typeof nodeSelectorRequirementSchema>;

/** matchFields is left out: Karpenter ignores it when it plans nodes. */
const nodeSelectorTermSchema = strict({ matchExpressions: z.array(nodeSelectorRequirementSchema).min(1, { error: 'must list at least one expression' }) });

const labelSelectorSchema = strict({
  matchLabels: z.record(labelKey, labelValue).optional(),
  matchExpressions: z
    .array(strict({ key: labelKey, operator: oneOf(LABEL_SELECTOR_OPERATORS), values: z.array(labelValue).optional() }).superRefine(operatorValues))
    .optional(),
});

const weight = z.number({ error: 'must be a whole number from 1 to 100' }).int({ error: 'must be a whole number from 1 to 100' }).min(1, { error: 'must be a whole number from 1 to 100' }).max(100, { error: 'must be a whole number from 1 to 100' });

const podAffinityTermSchema = strict({
  labelSelector: labelSelectorSchema.optional(),
  matchLabelKeys: z.array(labelKey).optional(),
  mismatchLabelKeys: z.array(labelKey).optional(),
  namespaceSelector: labelSelectorSchema.optional(),
  namespaces: z.array(z.string()).optional(),
  topologyKey: labelKey,
});
const podAffinitySchema = strict({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTermSchema).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(strict({ weight, podAffinityTerm: podAffinityTermSchema })).optional(),
});

export const affinitySchema = strict({
  nodeAffinity: strict({
    requiredDuringSchedulingIgnoredDuringExecution: strict({ nodeSelectorTerms: z.array(nodeSelectorTermSchema).min(1, { error: 'must list at least one term' }) }).optional(),
    preferredDuringSchedulingIgnoredDuringExecution: z.array(strict({ weight, preference: nodeSelectorTermSchema })).optional(),
  }).optional(),
  podAffinity: podAffinitySchema.optional(),
  podAntiAffinity: podAffinitySchema.optional(),
});
export type AffinityConfig = z.infer<typeof affinitySchema>;

export const topologySpreadConstraintSchema = strict({
  maxSkew: z.number({ error: 'must be a whole number, at least 1' }).int({ error: 'must be a whole number, at least 1' }).min(1, { error: 'must be a whole number, at least 1' }),
  topologyKey: labelKey,
  whenUnsatisfiable: oneOf(['DoNotSchedule', 'ScheduleAnyway']),
  /** Default here (not in Kubernetes): the workload's own pods. */
  labelSelector: labelSelectorSchema.optional(),
  minDomains: z.number().int().min(1, { error: 'must be at least 1' }).optional(),
  nodeAffinityPolicy: oneOf(['Honor', 'Ignore']).optional(),
  nodeTaintsPolicy: oneOf(['Honor', 'Ignore']).optional(),
  matchLabelKeys: z.array(labelKey).optional(),
}).superRefine((c, ctx) => {
  if (c.minDomains !== undefined && c.whenUnsatisfiable !== 'DoNotSchedule') {
    ctx.addIssue({ code: 'custom', path: ['minDomains'], message: 'may only be set when whenUnsatisfiable is DoNotSchedule', input: c.minDomains });
  }
});
export type TopologySpreadConstraintConfig = z.infer<typeof topologySpreadConstraintSchema>;

const seccompProfileSchema = strict({ type: oneOf(['RuntimeDefault', 'Localhost', 'Unconfined']), localhostProfile: z.string().optional() }).superRefine((s, ctx) => {
  if ((s.type === 'Localhost') !== (s.localhostProfile !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['localhostProfile'], message: 'must be set when, and only when, type is Localhost', input: s.localhostProfile });
  }
});
const appArmorProfileSchema = strict({ type: oneOf(['RuntimeDefault', 'Localhost', 'Unconfined']), localhostProfile: z.string().optional() });
const seLinuxOptionsSchema = strict({ level: z.string().optional(), role: z.string().optional(), type: z.string().optional(), user: z.string().optional() });
const windowsOptionsSchema = strict({
  gmsaCredentialSpec: z.string().optional(),
  gmsaCredentialSpecName: z.string().optional(),
  hostProcess: z.boolean().optional(),
  runAsUserName: z.string().optional(),
});
const id = z.number({ error: 'must be a whole number from 0 to 2147483647' }).int({ error: 'must be a whole number from 0 to 2147483647' }).min(0, { error: 'must be a whole number from 0 to 2147483647' }).max(2147483647, { error: 'must be a whole number from 0 to 2147483647' });

export const podSecurityContextSchema = strict({
  runAsNonRoot: z.boolean().optional(),
  runAsUser: id.optional(),
  runAsGroup: id.optional(),
  fsGroup: id.optional(),
  fsGroupChangePolicy: oneOf(['OnRootMismatch', 'Always']).optional(),
  supplementalGroups: z.array(id).optional(),
  seccompProfile: seccompProfileSchema.optional(),
  appArmorProfile: appArmorProfileSchema.optional(),
  seLinuxOptions: seLinuxOptionsSchema.optional(),
  sysctls: z.array(strict({ name: z.string().min(1), value: z.string() })).optional(),
  windowsOptions: windowsOptionsSchema.optional(),
});
export type PodSecurityContextConfig = z.infer<typeof podSecurityContextSchema>;

export const securityContextSchema = strict({
  allowPrivilegeEscalation: z.boolean().optional(),
  capabilities: strict({ add: z.array(z.string()).optional(), drop: z.array(z.string()).optional() }).optional(),
  privileged: z.boolean().optional(),
  procMount: oneOf(['Default', 'Unmasked']).optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  runAsNonRoot: z.boolean().optional(),
  runAsUser: id.optional(),
  runAsGroup: id.optional(),
  seccompProfile: seccompProfileSchema.optional(),
  appArmorProfile: appArmorProfileSchema.optional(),
  seLinuxOptions: seLinuxOptionsSchema.optional(),
  windowsOptions: windowsOptionsSchema.optional(),
});
export type SecurityContextConfig = z.infer<typeof securityContextSchema>;

/**
 * Names as the 1.36 API server accepts them: any printable ASCII but "=" (kubernetes@v1.36.5
 * pkg/apis/core/validation/validation.go ValidateEnv with RelaxedEnvironmentVariableValidation,
 * GA and locked on since 1.34; apimachinery pkg/util/validation IsRelaxedEnvVarName).
 */
const envName = z.string().regex(/^[\x20-\x3c\x3e-\x7e]+$/, { error: 'must be an environment variable name: printable ASCII characters other than "="' });
const keyRef = strict({ name: z.string().min(1, { error: 'must name the object' }), key: z.string().min(1), optional: z.boolean().optional() });
/** One `env` entry as Kubernetes writes it: a value, or exactly one source. */
export const envVarSchema = strict({
  name: envName,
  value: z.string().optional(),
  valueFrom: strict({
    secretKeyRef: keyRef.optional(),
    configMapKeyRef: keyRef.optional(),
    fieldRef: strict({ fieldPath: z.string().min(1), apiVersion: z.string().optional() }).optional(),
    resourceFieldRef: strict({ resource: z.string().min(1), containerName: z.string().optional(), divisor: z.string().optional() }).optional(),
  })
    .refine((s) => Object.values(s).filter((v) => v !== undefined).length === 1, { error: 'must set exactly one of secretKeyRef, configMapKeyRef, fieldRef or resourceFieldRef' })
    .optional(),
}).refine((e) => e.value === undefined || e.valueFrom === undefined, { error: 'must not set both value and valueFrom' });
export type EnvVarConfig = z.infer<typeof envVarSchema>;

/** The API server warns that a repeated name "hides previous definition": the first value is silently lost. */
function uniqueEnvNames(list: EnvVarConfig[], ctx: z.core.$RefinementCtx<EnvVarConfig[]>): void {
  const seen = new Map<string, number>();
  list.forEach((e, i) => {
    const first = seen.get(e.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `must be unique; "${e.name}" is already set at index ${first}, and only the last one would apply`, input: e.name });
    else seen.set(e.name, i);
  });
}

/** `env` as Kubernetes' list, or (shorter, and what this file took first) a map of names to values. */
export const envSchema = z.union([z.record(envName, z.string()), z.array(envVarSchema).superRefine(uniqueEnvNames)], {
  error: 'must be a map of NAME: value, or a list of {name, value} / {name, valueFrom} as in a pod spec',
});

// Compile-time proof that each shape is Kubernetes' own (cdk8s-plus-30's k8s types).
type Is<T extends U, U> = T;
export type ShapeChecks = [
  Is<AffinityConfig, k8s.Affinity>,
  Is<TopologySpreadConstraintConfig, k8s.TopologySpreadConstraint>,
  Is<PodSecurityContextConfig, k8s.PodSecurityContext>,
  Is<SecurityContextConfig, k8s.SecurityContext>,
  Is<Omit<EnvVarConfig, 'valueFrom'>, Omit<k8s.EnvVar, 'valueFrom'>>,
];
