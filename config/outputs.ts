import { lstatSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, describeValue, issuesFromZod } from './errors.js';
import { writeFileAtomic } from './atomic.js';
import { readInputText } from './yaml-input.js';

/**
 * The contract between infra (writer) and charts/argocd (readers):
 * `infra/outputs/<env>.json`. One key table, one schema, used on both sides, so a key
 * renamed on one side is a compile error on the other.
 */
export const OUTPUT_KEYS = [
  'clusterName',
  'region',
  'accountId',
  'kubernetesVersion',
  'nodeRoleName',
  'nodeRoleArn',
  'controllerRoleArn',
  'interruptionQueueName',
  'interruptionQueueArn',
  'karpenterChartVersion',
  'kubeconfigCommand',
] as const;
export type OutputKey = (typeof OUTPUT_KEYS)[number];

const arn = (service: string) => z.string().regex(new RegExp(`^arn:aws[a-z-]*:${service}:`), { error: `must be an ${service} ARN (arn:aws:${service}:...)` });

/** IAM's role name rule (CreateRole): 1-64 of letters, digits and +=,.@_- */
const iamRoleName = z.string().regex(/^[\w+=,.@-]{1,64}$/, { error: 'must be an IAM role name: 1-64 letters, digits and +=,.@_-' });
/** SQS's standard queue name rule (CreateQueue): 1-80 letters, digits, - and _. Karpenter polls a standard queue. */
const sqsQueueName = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, { error: 'must be a standard SQS queue name: 1-80 letters, digits, "-" and "_"' });

export const outputsSchema = z
  .strictObject({
    clusterName: z.string().min(1),
    region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, { error: 'must be an AWS region such as us-east-1' }),
    accountId: z.string().regex(/^\d{12}$/, { error: 'must be a 12-digit AWS account id' }),
    kubernetesVersion: z.string().regex(/^1\.\d{2}$/, { error: 'must be a Kubernetes minor version such as "1.36"' }),
    nodeRoleName: iamRoleName,
    nodeRoleArn: arn('iam'),
    controllerRoleArn: arn('iam'),
    interruptionQueueName: sqsQueueName,
    interruptionQueueArn: arn('sqs'),
    karpenterChartVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
    kubeconfigCommand: z.string().min(1),
  } satisfies Record<OutputKey, z.ZodType>)
  .superRefine((o, ctx) => {
    // A name and its ARN written by hand can disagree (a role ARN may carry a path: compare the last segment): the chart gets the name, IAM and SQS the ARN.
    if (iamRoleName.safeParse(o.nodeRoleName).success && o.nodeRoleArn.split('/').at(-1) !== o.nodeRoleName) {
      ctx.addIssue({ code: 'custom', path: ['nodeRoleArn'], message: `must be the ARN of nodeRoleName "${o.nodeRoleName}"`, input: o.nodeRoleArn });
    }
    if (sqsQueueName.safeParse(o.interruptionQueueName).success && !o.interruptionQueueArn.endsWith(`:${o.interruptionQueueName}`)) {
      ctx.addIssue({ code: 'custom', path: ['interruptionQueueArn'], message: `must be the ARN of interruptionQueueName "${o.interruptionQueueName}"`, input: o.interruptionQueueArn });
    }
  });

export type InfraOutputs = z.infer<typeof outputsSchema>;

export const outputsPath = (env: string) => `infra/outputs/${env}.json`;

/**
 * Reads and checks an outputs file. A missing file, bad JSON, or a file with missing
 * keys fails with one message listing every missing or malformed key, and the hint to
 * run the infra script (or to copy an example).
 */
export function readOutputs(path: string, file = path): InfraOutputs {
  try {
    lstatSync(path);
  } catch {
    throw new ConfigError(file, [
      {
        path: '',
        message: `does not exist; run \`npm run infra -- outputs --env <env>\` after apply. It must hold: ${OUTPUT_KEYS.join(', ')}`,
      },
    ]);
  }
  // Regular files inside the repository only, size-capped: a FIFO or /dev/zero must not hang synth.
  const text = readInputText(path, file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, [{ path: '', message: `is not valid JSON: ${(err as Error).message}` }]);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: '', message: `must be a JSON object with keys ${OUTPUT_KEYS.join(', ')}, got ${describeValue(raw)}` }]);
  }
  if ((raw as Record<string, unknown>)[DESTROYED_KEY] === true) {
    const cluster = (raw as Record<string, unknown>).clusterName;
    throw new ConfigError(file, [
      {
        path: '',
        message: `records that \`npm run infra -- destroy\` deleted cluster ${describeValue(cluster)}, its roles and its queue: nothing can be synthesized against it; run \`npm run infra -- apply --env <env>\` to recreate them (it rewrites this file), or remove the environment`,
      },
    ]);
  }
  const missing = OUTPUT_KEYS.filter((k) => !(k in raw));
  const parsed = outputsSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesFromZod(parsed.error, raw).filter((i) => !missing.includes(i.path as OutputKey));
    const head = missing.length > 0 ? [{ path: '', message: `is missing keys: ${missing.join(', ')}` }] : [];
    throw new ConfigError(file, [...head, ...issues]);
  }
  return parsed.data;
}

/** The key of the tombstone `destroy` leaves: `{"destroyed": true, "clusterName": ...}`. */
export const DESTROYED_KEY = 'destroyed';

/**
 * What `destroy` leaves in place of the outputs file: a tombstone rather than nothing, so
 * synth says why the names are gone instead of "run outputs", and git shows the change.
 */
export function renderDestroyedOutputs(clusterName: string): string {
  return `${JSON.stringify({ [DESTROYED_KEY]: true, clusterName }, null, 2)}\n`;
}

/** Writes the tombstone atomically, like the outputs it replaces. */
export function writeDestroyedOutputs(file: string, clusterName: string): void {
  writeFileAtomic(file, renderDestroyedOutputs(clusterName));
}

/** Serializes outputs with keys in table order (stable diffs), ending with a newline. */
export function renderOutputs(outputs: InfraOutputs): string {
  const ordered = Object.fromEntries(OUTPUT_KEYS.map((k) => [k, outputs[k]]));
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Validates then writes atomically (temp file + rename): readers never see half a file. */
export function writeOutputs(file: string, outputs: InfraOutputs): void {
  const parsed = outputsSchema.parse(outputs);
  writeFileAtomic(file, renderOutputs(parsed));
}
