import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/errors.js';
import { outputsPath, writeDestroyedOutputs, writeOutputs, type InfraOutputs } from '../config/outputs.js';
import type { AwsClients, ClientOptions } from './clients.js';
import { loadDesired, type DesiredState } from './desired.js';
import { InfraError, type Observed, type Plan } from './model.js';
import { planApply, planDestroy, planJson, queueArn, renderPlan, roleArn, summary } from './plan.js';

/**
 * `npm run infra -- <plan|apply|destroy|outputs> --env <env>`. Only this file and
 * plan/desired load at start; the SDK (observe, apply, clients) is imported when a command
 * needs AWS, so `--help` and config errors answer at once.
 */

const USAGE = `usage: npm run infra -- <plan|apply|destroy|outputs> --env <env> [options]

  plan      show what apply would change (--json for machine-readable output)
  apply     re-plan, then create or update; writes infra/outputs/<env>.json
  destroy   delete everything apply made, Karpenter's own instances first
  outputs   write infra/outputs/<env>.json from what exists

options:
  --env <env>                     environments/<env>.yaml (required)
  --profile <name>                AWS profile (default: the SDK's standard credential chain)
  --region <region>               overrides cluster.region
  --endpoint-url <url>            send every AWS call to an emulator such as moto
  --json                          plan: print the plan as JSON
  --yes                           destroy: do not ask for confirmation
  --terminate-karpenter-instances destroy: terminate Karpenter's instances instead of refusing
  --prune-iam                     plan/apply: also remove policies on our roles that this tool did not attach
  --adopt                         plan/apply: take over same-named resources lacking the managed-by=karpenter-gitops tag
                                  (tags them), and switch the cluster's authentication mode to API
  --environments-dir <dir>        default: environments
  --outputs-file <file>           default: infra/outputs/<env>.json`;

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Builds the clients; tests wrap them (call log, fault injection, the EKS stand-in). */
  readonly clients?: (opts: ClientOptions) => Promise<AwsClients>;
  /** Asks for confirmation; absent = refuse unless --yes. */
  readonly confirm?: (question: string) => Promise<string>;
  readonly pollMs?: number;
  /** First backoff of the IAM propagation retry. */
  readonly retryBaseMs?: number;
}

export interface CliResult {
  readonly code: number;
  /** Mutating AWS calls made, by command name, in order. */
  readonly mutatingCalls: readonly string[];
}

const COMMANDS = ['plan', 'apply', 'destroy', 'outputs'] as const;
type Command = (typeof COMMANDS)[number];

export async function runCli(argv: readonly string[], io: CliIo): Promise<CliResult> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        env: { type: 'string' },
        profile: { type: 'string' },
        region: { type: 'string' },
        'endpoint-url': { type: 'string' },
        identity: { type: 'string' },
        json: { type: 'boolean', default: false },
        yes: { type: 'boolean', default: false },
        'terminate-karpenter-instances': { type: 'boolean', default: false },
        'prune-iam': { type: 'boolean', default: false },
        adopt: { type: 'boolean', default: false },
        'environments-dir': { type: 'string', default: 'environments' },
        'outputs-file': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return { code: 2, mutatingCalls: [] };
  }
  if (values.help) {
    io.out(USAGE);
    return { code: 0, mutatingCalls: [] };
  }
  const command = positionals[0] as Command | undefined;
  if (!command || !COMMANDS.includes(command) || positionals.length > 1) {
    io.err(`command must be one of ${COMMANDS.join(', ')}, got ${positionals.length ? positionals.map((p) => `"${p}"`).join(' ') : 'nothing'}\n${USAGE}`);
    return { code: 2, mutatingCalls: [] };
  }
  if (!values.env) {
    io.err(`--env is required: the name of a file in ${values['environments-dir']}/ without .yaml`);
    return { code: 2, mutatingCalls: [] };
  }
  if (values.identity !== undefined) {
    // The charts read cluster.identity from the file: an override here would leave the controller without credentials.
    io.err('--identity is no longer accepted: set cluster.identity in the environment file (the charts read it from there too)');
    return { code: 2, mutatingCalls: [] };
  }

  let desired: DesiredState;
  try {
    desired = loadDesired(
      values.env,
      values.region ? { region: values.region } : {},
      values['environments-dir'],
    );
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(err.message);
      return { code: 2, mutatingCalls: [] };
    }
    throw err;
  }

  const { createClients, recordCalls, CallLog, destroyClients } = await import('./clients.js');
  const { observe } = await import('./observe.js');
  const clientOpts: ClientOptions = {
    region: desired.region,
    ...(values.profile ? { profile: values.profile } : {}),
    ...(values['endpoint-url'] ? { endpoint: values['endpoint-url'] } : {}),
  };
  const clients = await (io.clients ?? createClients)(clientOpts);
  const log = new CallLog();
  recordCalls(clients, log);
  const outputsFile = values['outputs-file'] ?? outputsPath(desired.env);
  const result = (code: number): CliResult => ({ code, mutatingCalls: log.mutating });
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

  try {
    const observed = await observe(clients, desired);
    switch (command) {
      case 'plan': {
        const plan = planApply(desired, observed, { pruneIam: values['prune-iam'], adopt: values.adopt });
        io.out(values.json ? planJson(plan) : renderPlan(plan));
        return result(refuse(plan) ? 1 : 0);
      }
      case 'apply': {
        const plan = planApply(desired, observed, { pruneIam: values['prune-iam'], adopt: values.adopt });
        io.out(renderPlan(plan));
        if (refuse(plan)) return result(1);
        const code = await executePlan(plan, observed);
        if (code !== 0) return result(code);
        const outputs = outputsFor(desired, observed);
        writeOutputs(outputsFile, outputs);
        io.out(
          log.mutating.length === 0
            ? `No changes: ${log.mutating.length} mutating calls (${seconds()}). Wrote ${outputsFile}.`
            : `Applied: ${log.mutating.length} mutating calls (${seconds()}). Wrote ${outputsFile}.`,
        );
        return result(0);
      }
      case 'destroy': {
        const plan = planDestroy(desired, observed, { terminateKarpenterInstances: values['terminate-karpenter-instances'] });
        io.out(renderPlan(plan));
        if (refuse(plan)) return result(1);
        if (plan.actions.every((a) => a.kind === 'noop')) {
          const marked = markDestroyed();
          io.out(`Nothing to destroy: ${log.mutating.length} mutating calls (${seconds()}).${marked}`);
          return result(0);
        }
        if (!values.yes) {
          const answer = io.confirm ? await io.confirm(`Type the cluster name (${desired.clusterName}) to destroy it: `) : '';
          if (answer.trim() !== desired.clusterName) {
            io.err(io.confirm ? 'Not confirmed; nothing was deleted.' : 'Refusing to destroy without a terminal to confirm on; pass --yes.');
            return result(1);
          }
        }
        // Marked before the first delete: from then on the names in it may be gone, even if a step fails.
        const marked = markDestroyed();
        const code = await executePlan(plan, observed);
        if (code === 0) io.out(`Destroyed: ${log.mutating.length} mutating calls (${seconds()}).${marked}`);
        return result(code);
      }
      case 'outputs': {
        const missing = [
          ...(observed.cluster ? [] : [`cluster ${desired.clusterName}`]),
          ...[desired.names.nodeRole, desired.names.controllerRole].filter((r) => !observed.roles[r]).map((r) => `role ${r}`),
          ...(observed.queue ? [] : [`queue ${desired.names.queue}`]),
        ];
        if (missing.length > 0) throw new InfraError('E_NOT_APPLIED', `cannot write ${outputsFile}: ${missing.join(', ')} missing; run \`npm run infra -- apply --env ${desired.env}\``);
        writeOutputs(outputsFile, outputsFor(desired, observed));
        io.out(`Wrote ${outputsFile}.`);
        return result(0);
      }
    }
  } catch (err) {
    if (err instanceof InfraError || err instanceof ConfigError) {
      io.err(err.message);
      return result(1);
    }
    const e = err as Error & { $metadata?: { httpStatusCode?: number } };
    io.err(`AWS call failed: ${e.name}: ${e.message}`);
    return result(1);
  } finally {
    destroyClients(clients);
  }

  /** Safety refusals are errors: stderr, next to the plan that explains them on stdout. */
  function refuse(plan: Plan): boolean {
    for (const b of plan.blockers) io.err(`refused: ${b}`);
    return plan.blockers.length > 0;
  }

  /** Replaces an existing outputs file by the tombstone synth refuses; returns what to say about it. */
  function markDestroyed(): string {
    if (!existsSync(outputsFile)) return '';
    writeDestroyedOutputs(outputsFile, desired.clusterName);
    return ` Marked ${outputsFile} destroyed.`;
  }

  async function executePlan(plan: Plan, observed: Observed): Promise<number> {
    if (plan.actions.every((a) => a.kind === 'noop')) return 0;
    const { execute } = await import('./apply.js');
    io.out(`${plan.operation === 'apply' ? 'Applying' : 'Destroying'}: ${summary(plan)}`);
    const res = await execute({ clients, desired, plan, partition: observed.partition, log: io.out, ...(io.pollMs ? { pollMs: io.pollMs } : {}), ...(io.retryBaseMs !== undefined ? { retryBaseMs: io.retryBaseMs } : {}) });
    for (const f of res.failed) io.err(`failed: ${f.resource}: ${f.error.name}: ${f.error.message}`);
    if (res.failed.length > 0) {
      io.err(`${res.failed.length} action(s) failed after ${log.mutating.length} mutating calls; fix the cause and run the command again: it resumes where it stopped.`);
      return 1;
    }
    return 0;
  }
}

export function outputsFor(d: DesiredState, o: Pick<Observed, 'partition' | 'accountId'>): InfraOutputs {
  return {
    clusterName: d.clusterName,
    region: d.region,
    accountId: o.accountId,
    kubernetesVersion: d.kubernetesVersion,
    nodeRoleName: d.names.nodeRole,
    nodeRoleArn: roleArn(o, d.names.nodeRole),
    controllerRoleArn: roleArn(o, d.names.controllerRole),
    interruptionQueueName: d.names.queue,
    interruptionQueueArn: queueArn(d, o),
    karpenterChartVersion: d.chartVersion,
    kubeconfigCommand: `aws eks update-kubeconfig --region ${d.region} --name ${d.clusterName}`,
  };
}

async function main(): Promise<void> {
  const rl = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stderr }) : undefined;
  try {
    const res = await runCli(process.argv.slice(2), {
      out: (l) => process.stdout.write(`${l}\n`),
      err: (l) => process.stderr.write(`${l}\n`),
      ...(rl ? { confirm: (q: string) => rl.question(q) } : {}),
    });
    process.exitCode = res.code;
  } finally {
    rl?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
