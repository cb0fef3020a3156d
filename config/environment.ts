import { readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { z } from 'zod';
import { DEFAULT_AMI_ALIAS } from './defaults.js';
import { ConfigError, describeValue } from './errors.js';
import { parseYamlInput, readInputText } from './yaml-input.js';
import { nodeClassSchema, nodePoolSchema } from './karpenter-schema.js';
import { objectName, quantity, strict, uniqueNames } from './schema-kit.js';
import { checkWorkloads, workloadWarnings, workloadsSchema } from './workload-schema.js';
import { daemonSetOverheadSchema } from './daemonset-overhead.js';

/**
 * The per-environment config, `environments/<env>.yaml`, read by both infra and charts.
 * This schema is the single source of truth: types are inferred from it and
 * `environments/schema.json` is generated from it for editors.
 */

const awsId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}-[0-9a-f]{8,17}$`), { error: `must be an id like ${prefix}-0123456789abcdef0` });
const cidr = z.string().regex(/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/, { error: 'must be an IPv4 CIDR such as 203.0.113.0/24' });

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
  privateSubnetIds: z.array(awsId('subnet')).min(2, { error: 'must list at least two private subnets (EKS needs two AZs)' }),
  /** CIDRs allowed to reach the public API endpoint. Empty list = private endpoint only. */
  publicAccessCidrs: z.array(cidr).default([]),
  systemNodeGroup: strict({
    instanceTypes: z.array(z.string().regex(/^[a-z0-9-]+\.[a-z0-9]+$/, { error: 'must be an EC2 instance type such as t3.medium' })).min(1).default(['t3.medium']),
    /** min = desired = max: the system group never scales; Karpenter does. */
    size: z.number().int().min(1).max(100).default(2),
    labels: z.record(z.string(), z.string()).default({ 'node-role': 'system' }),
  }).prefault({}),
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
  }).prefault({}),
}).prefault({});

export const environmentSchema = strict({
  /** Marks production: warnings about unpinned AMIs and similar apply. */
  production: z.boolean().default(false),
  cluster: clusterSchema,
  karpenter: karpenterSchema,
  nodeClasses: z.array(nodeClassSchema).min(1).superRefine((items, ctx) => uniqueNames(items, ctx, 'node classes')),
  nodePools: z.array(nodePoolSchema).min(1).superRefine((items, ctx) => uniqueNames(items, ctx, 'node pools')),
  /** Spot-ready Deployments (charts/spot-ready-workload.ts); the inflate test Deployment is always emitted. */
  workloads: workloadsSchema,
  /** DaemonSets on every Karpenter node, for `npm run simulate`; replaces its EKS add-on defaults. */
  daemonSets: z.array(daemonSetOverheadSchema).superRefine((items, ctx) => uniqueNames(items, ctx, 'daemonSets')).optional(),
}).superRefine((env, ctx) => {
  checkWorkloads(env, ctx);
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
  const config = parseYamlInput(file, text, environmentSchema, 'cluster, nodeClasses and nodePools');
  return { name, file, config, warnings: warningsFor(file, config) };
}

function warningsFor(file: string, env: EnvironmentConfig): string[] {
  const out: string[] = [];
  if (env.production) {
    env.nodeClasses.forEach((nc, i) => {
      (nc.amiSelectorTerms ?? [{ alias: DEFAULT_AMI_ALIAS }]).forEach((term, j) => {
        if (term.alias?.endsWith('@latest')) {
          const where = nc.amiSelectorTerms ? `nodeClasses[${i}].amiSelectorTerms[${j}].alias` : `nodeClasses[${i}].amiSelectorTerms (default)`;
          out.push(
            `${file}: ${where}: "${term.alias}" in a production environment: every new AMI release rolls all nodes of this class (drift); pin a version such as al2023@v20261115`,
          );
        }
      });
    });
  }
  out.push(...workloadWarnings(file, env));
  return out;
}

/** All `*.yaml` files of a directory, sorted, validated. Collects every file's errors before throwing. */
export function loadEnvironments(dir: string, only?: readonly string[], root = process.cwd()): LoadedEnvironment[] {
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const wanted = only && only.length > 0 ? only : undefined;
  if (wanted) {
    const names = files.map((f) => f.replace(/\.ya?ml$/, ''));
    const unknown = wanted.filter((w) => !names.includes(w));
    if (unknown.length > 0) {
      throw new ConfigError(relative(root, dir) || dir, [
        { path: '', message: `has no environment ${unknown.map((u) => `"${u}"`).join(', ')}; environments are: ${names.join(', ')}` },
      ]);
    }
  }
  const errors: ConfigError[] = [];
  const loaded: LoadedEnvironment[] = [];
  for (const f of files) {
    const name = f.replace(/\.ya?ml$/, '');
    if (wanted && !wanted.includes(name)) continue;
    try {
      loaded.push(loadEnvironment(join(dir, f), relative(root, join(dir, f))));
    } catch (err) {
      if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  }
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
