import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EKSClient } from '@aws-sdk/client-eks';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { IAMClient } from '@aws-sdk/client-iam';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { STSClient } from '@aws-sdk/client-sts';

/**
 * The AWS clients infra code talks through. Passed in, never constructed inside observe or
 * apply, so tests can wrap them (call counting, fault injection) and the CLI can load the
 * SDK lazily: loading @aws-sdk/client-ec2 alone costs ~0.4 s.
 */
export interface AwsClients {
  readonly ec2: EC2Client;
  readonly eks: EKSClient;
  readonly events: EventBridgeClient;
  readonly iam: IAMClient;
  readonly sqs: SQSClient;
  readonly sts: STSClient;
}

export interface ClientOptions {
  readonly region: string;
  /** Named profile from ~/.aws/config; otherwise the SDK's default chain (env, SSO, IMDS...). */
  readonly profile?: string;
  /** An emulator such as moto; every client goes there. */
  readonly endpoint?: string;
  /** The SDK's standard retry mode retries throttling and transient errors with backoff. */
  readonly maxAttempts?: number;
}

export async function createClients(opts: ClientOptions): Promise<AwsClients> {
  const [ec2, eks, events, iam, sqs, sts] = await Promise.all([
    import('@aws-sdk/client-ec2'),
    import('@aws-sdk/client-eks'),
    import('@aws-sdk/client-eventbridge'),
    import('@aws-sdk/client-iam'),
    import('@aws-sdk/client-sqs'),
    import('@aws-sdk/client-sts'),
  ]);
  // Credentials are never passed: the default provider chain resolves them (profile, SSO, env).
  const cfg = {
    region: opts.region,
    retryMode: 'standard',
    maxAttempts: opts.maxAttempts ?? 5,
    ...(opts.profile ? { profile: opts.profile } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
  };
  return {
    ec2: new ec2.EC2Client(cfg),
    eks: new eks.EKSClient(cfg),
    events: new events.EventBridgeClient(cfg),
    iam: new iam.IAMClient(cfg),
    sqs: new sqs.SQSClient(cfg),
    sts: new sts.STSClient(cfg),
  };
}

/** A read-only call by AWS naming convention; everything else changes something. */
export const isReadOnly = (command: string) => /^(Describe|Get|List)/.test(command);

/** Counts calls per command (the command name without the `Command` suffix). */
export class CallLog {
  readonly calls: string[] = [];
  record(command: string): void {
    this.calls.push(command.replace(/Command$/, ''));
  }
  get mutating(): string[] {
    return this.calls.filter((c) => !isReadOnly(c));
  }
}

/**
 * Records every command sent through the clients. Registered at the `initialize` step, so
 * one logical call counts once however many times the retry strategy sends it.
 */
export function recordCalls(clients: AwsClients, log: CallLog): void {
  for (const client of Object.values(clients) as EC2Client[]) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        log.record(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'karpenterGitopsCallLog' },
    );
  }
}

export function destroyClients(clients: AwsClients): void {
  for (const client of Object.values(clients) as EC2Client[]) client.destroy();
}
