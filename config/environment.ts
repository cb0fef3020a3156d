import { readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { z } from 'zod';
import { ConfigError, describeValue } from './errors.js';
import { parseYamlInput, readInputText } from './yaml-input.js';
import { checkNodeClassesForCluster, nodeClassSchema, nodeOverlaySchema, nodePoolSchema, nodeTemplateMetadataWarnings } from './karpenter-schema.js';
import { nodeOverlayWarnings } from './node-overlay-checks.js';
import { labelKey, labelValue, objectName, placeholderIssues, quantity, strict, uniqueNames } from './schema-kit.js';
import { reviewSchema } from './review-schema.js';
import { checkWorkloads, workloadWarnings, workloadsSchema } from './workload-schema.js';
import { daemonSetOverheadSchema } from './daemonset-overhead.js';

/**
 * The per-environment config, `environments/<env>.yaml`, read by both infra and charts.
 * This schema is the single source of truth: types are inferred from it and
 * `environments/schema.json` is generated from it for editors.
 */

const awsId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}-[0-9a-f]{8,17}$`), { error: `must be an id like ${prefix}-0123456789abcdef0` });
/** IPv4 CIDR with octets 0-255 and a prefix of 0-32: EKS rejects anything else only at apply time. */
const cidr = z
  .string({ error: 'must be an IPv4 CIDR such as 203.0.113.0/24' })
  .regex(/^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\/(3[0-2]|[12]?\d)$/, {
    error: 'must be an IPv4 CIDR such as 203.0.113.0/24 (four octets 0-255, prefix 0-32)',
  });

/** A list whose entries must not repeat: a repeated subnet or CIDR is a typo for another one. */
function noDuplicates(what: string) {
  return (items: readonly string[], ctx: z.core.$RefinementCtx<string[]>) => {
    items.forEach((item, i) => {
      const first = items.indexOf(item);
      if (first !== i) ctx.addIssue({ code: 'custom', path: [i], message: `must not repeat a ${what} (already at index ${first})`, input: item });
    });
  };
}

/** System node group labels; at least one, because the Karpenter controller is pinned to the group by them. */
const systemLabels = z.record(labelKey, labelValue).refine((labels) => Object.keys(labels).length > 0, {
  error: 'must have at least one label: the Karpenter controller is pinned to the system node group by its labels',
});

export const clusterSchema = strict({
  /** EKS cluster name; also the discovery tag value, the queue name and part of the role names. */
  // 43, not EKS's 100: the name is part of IAM role names (KarpenterController-<name>, 64 max)
  // and EventBridge rule names (<name>-capacity-reservation, 64 max).
  name: z.string().regex(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,42}$/, {
    error: 'must be a cluster name of letters, digits, "-" and "_", at most 43 characters (it becomes part of IAM role and EventBridge rule names, 64 characters max)',
  }),
  region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, { error: 'must be an AWS region such as us-east-1' }),
  /** EKS Kubernetes version ("major.minor"). */
  kubernetesVersion: z.string().regex(/^1\.\d{2}$/, { error: 'must be a Kubernetes minor version such as "1.36" (quote it in YAML)' }).default('1.36'),
  vpcId: awsId('vpc'),
  /** Private subnets: the cluster, the system node group and Karpenter nodes use these. */
  privateSubnetIds: z.array(awsId('subnet')).min(2, { error: 'must list at least two private subnets (EKS needs two AZs)' }).superRefine(noDuplicates('subnet')),
  /** CIDRs allowed to reach the public API endpoint. Empty list = private endpoint only. */
  publicAccessCidrs: z.array(cidr).superRefine(noDuplicates('CIDR')).default([]),
  systemNodeGroup: strict({
    instanceTypes: z.array(z.string().regex(/^[a-z0-9-]+\.[a-z0-9]+$/, { error: 'must be an EC2 instance type such as t3.medium' })).min(1).default(['t3.medium']),
    /** min = desired = max: the system group never scales; Karpenter does. */
    size: z.number().int().min(1).max(100).default(2),
    labels: systemLabels.default({ 'node-role': 'system' }),
  }).prefault({}),
  /**
   * Availability zones Karpenter may use (those of the private subnets). Optional: the
   * analyzer then assumes every zone of the region and says so.
   */
  availabilityZones: z.array(z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, { error: 'must be an availability zone such as us-east-1a' })).min(1).optional(),
  /** How the controller gets AWS credentials: EKS Pod Identity (default) or IRSA. */
  identity: z.enum(['podIdentity', 'irsa'], { error: 'must be one of podIdentity, irsa' }).default('podIdentity'),
});

export const karpenterSchema = strict({
  chartVersion: z.string().regex(/^\d+\.\d+\.\d+$/, { error: 'must be a chart version such as 1.13.1' }).default('1.13.1'),
  namespace: objectName.default('kube-system'),
  replicas: z.number().int().min(1).max(10).default(2),
  resources: strict({
    requests: strict({ cpu: quantity, memory: quantity }).default({ cpu: '500m', memory: '512Mi' }),
    limits: strict({ cpu: quantity.optional(), memory: quantity }).default({ memory: '512Mi' }),
  })
    .superRefine((r, ctx) => {
      // The API server refuses a Deployment whose requests exceed its limits: the chart would never roll out.
      for (const res of ['cpu', 'memory'] as const) {
        const limit = r.limits[res];
        if (limit !== undefined && quantityValue(r.requests[res]) > quantityValue(limit)) {
          ctx.addIssue({ code: 'custom', path: ['requests', res], message: `must be at most the limit ${limit} (limits.${res})`, input: r.requests[res] });
        }
      }
    })
    .prefault({}),
}).prefault({});

const QUANTITY_SUFFIX: Readonly<Record<string, number>> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A quantity the schema accepted, as a number: precise enough to compare requests with limits. */
export function quantityValue(q: string): number {
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))([eE][+-]?(?:\d+(?:\.\d*)?|\.\d+)|[KMGTPE]i|[numkMGTPE])?$/.exec(q);
  if (!m) return Number.NaN;
  const suffix = m[2] ?? '';
  return /^[eE]/.test(suffix) ? Number(`${m[1]}${suffix}`) : Number(m[1]) * QUANTITY_SUFFIX[suffix]!;
}

/**
 * The chart gives the controller a required pod anti-affinity on the hostname and the
 * controller is pinned to the system node group: one replica per system node, the rest
 * stay Pending forever.
 */
export function checkControllerFits(env: { cluster: { systemNodeGroup: { size: number } }; karpenter: { replicas: number } }, ctx: z.core.$RefinementCtx<unknown>): void {
  const { size } = env.cluster.systemNodeGroup;
  if (env.karpenter.replicas > size) {
    ctx.addIssue({
      code: 'custom',
      path: ['karpenter', 'replicas'],
      message: `must be at most cluster.systemNodeGroup.size (${size}): the chart's required anti-affinity puts one controller per system node, the rest would stay Pending`,
      input: env.karpenter.replicas,
    });
  }
}

export const environmentSchema = strict({
  /** Marks production: warnings about unpinned AMIs and similar apply. */
  production: z.boolean().default(false),
  cluster: clusterSchema,
  karpenter: karpenterSchema,
  nodeClasses: z.array(nodeClassSchema).min(1).superRefine((items, ctx) => uniqueNames(items, ctx, 'node classes')),
  nodePools: z.array(nodePoolSchema).min(1).superRefine((items, ctx) => uniqueNames(items, ctx, 'node pools')),
  /** Thresholds and assumptions of `npm run analyze` and reports/<env>.md. */
  review: reviewSchema,
  /** Spot-ready Deployments (charts/spot-ready-workload.ts); the inflate test Deployment is always emitted. */
  workloads: workloadsSchema,
  /** Karpenter NodeOverlays (alpha): price and extended-resource adjustments; their presence turns the feature gate on. */
  nodeOverlays: z.array(nodeOverlaySchema).default([]).superRefine((items, ctx) => uniqueNames(items, ctx, 'node overlays')),
  /** DaemonSets on every Karpenter node, for `npm run simulate`; replaces its EKS add-on defaults. */
  daemonSets: z.array(daemonSetOverheadSchema).superRefine((items, ctx) => uniqueNames(items, ctx, 'daemonSets')).optional(),
}).superRefine((env, ctx) => {
  checkWorkloads(env, ctx);
  checkControllerFits(env, ctx);
  checkNodeClassesForCluster(env, ctx);
  placeholderIssues(env, ctx);
  const classes = env.nodeClasses.map((c) => c.name);
  env.nodePools.forEach((pool, i) => {
    if (!classes.includes(pool.nodeClass)) {
      ctx.addIssue({
        code: 'custom',
        path: ['nodePools', i, 'nodeClass'],
        message: `must name one of the nodeClasses (${classes.join(', ')})`,
        input: pool.nodeClass,
      });
    }
  });
});

export type EnvironmentConfig = z.infer<typeof environmentSchema>;

export interface LoadedEnvironment {
  /** File name without extension: `prod` for environments/prod.yaml. */
  readonly name: string;
  /** Path as given (relative to the repo root in the CLI), used in every message. */
  readonly file: string;
  readonly config: EnvironmentConfig;
  /** Things that are allowed but probably not meant; printed, never fatal. */
  readonly warnings: readonly string[];
}

/** Parses and validates one environment file. Throws ConfigError listing every problem. */
export function loadEnvironment(path: string, file = path): LoadedEnvironment {
  const name = basename(file).replace(/\.ya?ml$/, '');
  const nameCheck = objectName.safeParse(name);
  if (!nameCheck.success) {
    throw new ConfigError(file, [{ path: '', message: `file name must be a lowercase RFC 1123 name followed by .yaml, got ${describeValue(basename(file))}` }]);
  }
  return parseEnvironment(file, readInputText(path, file));
}

/** Validates environment YAML text; `file` names it in messages. */
export function parseEnvironment(file: string, text: string): LoadedEnvironment {
  const name = basename(file).replace(/\.ya?ml$/, '');
  const config = parseYamlInput(file, text, environmentSchema, 'cluster, nodeClasses and nodePools', { mapsBecomeManifests: true });
  return { name, file, config, warnings: warningsFor(file, config) };
}

// The `@latest` AMI warning lives with the analyzer's findings (analyze/analyze.ts), which synth prints.
function warningsFor(file: string, env: EnvironmentConfig): string[] {
  const out: string[] = [];
  out.push(...workloadWarnings(file, env));
  out.push(...nodeTemplateMetadataWarnings(file, env.nodePools));
  out.push(...nodeOverlayWarnings(file, env));
  return out;
}

/**
 * Every environment file of a directory (`<env>.yaml`, or `<env>.yml`), sorted, validated.
 * Collects every file's errors before throwing. A name with another case (`qa.YAML`) or an
 * environment defined by two files (`dev.yml` beside `dev.yaml`) is an error, never a
 * silent skip or a silent winner.
 */
export function loadEnvironments(dir: string, only?: readonly string[], root = process.cwd()): LoadedEnvironment[] {
  const where = relative(root, dir) || dir;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'must be a directory, got a file' : `cannot be read (${code ?? String(err)})`;
    throw new ConfigError(where, [{ path: '', message: `${why}; it holds one <env>.yaml file per environment` }]);
  }
  const errors: ConfigError[] = [];
  const byName = new Map<string, string>();
  for (const f of entries.filter((e) => /\.ya?ml$/i.test(e)).sort()) {
    const name = f.replace(/\.ya?ml$/i, '');
    if (!/\.ya?ml$/.test(f)) {
      errors.push(new ConfigError(relative(root, join(dir, f)), [{ path: '', message: `environment files end in lowercase .yaml, got ${describeValue(f)}; rename it to ${name}.yaml` }]));
      continue;
    }
    const first = byName.get(name);
    if (first !== undefined) {
      errors.push(
        new ConfigError(relative(root, join(dir, f)), [
          { path: '', message: `defines environment "${name}" a second time (${relative(root, join(dir, first))} defines it too); keep one of the two files` },
        ]),
      );
      continue;
    }
    byName.set(name, f);
  }
  const names = [...byName.keys()];
  const wanted = only && only.length > 0 ? only : undefined;
  if (wanted) {
    const unknown = wanted.filter((w) => !names.includes(w));
    if (unknown.length > 0) {
      throw new ConfigError(where, [{ path: '', message: `has no environment ${unknown.map((u) => `"${u}"`).join(', ')}; environments are: ${names.join(', ')}` }]);
    }
  }
  const loaded: LoadedEnvironment[] = [];
  for (const [name, f] of byName) {
    if (wanted && !wanted.includes(name)) continue;
    try {
      loaded.push(loadEnvironment(join(dir, f), relative(root, join(dir, f))));
    } catch (err) {
      if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  }
  errors.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateConfigError(errors);
  return loaded;
}

/** Several files with problems: the message has every line of every file. */
export class AggregateConfigError extends ConfigError {
  constructor(public readonly errors: readonly ConfigError[]) {
    super(errors[0]!.file, errors.flatMap((e) => e.issues));
    this.message = errors.map((e) => e.message).join('\n');
  }
}
