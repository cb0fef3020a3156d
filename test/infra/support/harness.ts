import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateSecurityGroupCommand, CreateSubnetCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import { createClients, type AwsClients, type ClientOptions } from '../../../infra/clients.js';
import { runCli, type CliResult } from '../../../infra/cli.js';
import { emptyStandIn, installEksStandIn, type EksStandInState } from './eks-stand-in.js';

export const CLUSTER = 'kgo-test';

export interface World {
  readonly dir: string;
  readonly envDir: string;
  readonly outputsFile: string;
  readonly vpcId: string;
  readonly subnetIds: readonly string[];
  /** Stands in for the security group EKS makes for a cluster (moto makes none). */
  readonly clusterSgId: string;
  /** A security group someone tagged by mistake: apply must untag it. */
  readonly decoySgId: string;
  readonly standIn: EksStandInState;
  readonly endpoint: string;
}

/** A VPC with two private subnets in two AZs, and an environment file pointing at them. */
export async function makeWorld(endpoint: string, identity: 'podIdentity' | 'irsa' = 'podIdentity'): Promise<World> {
  const ec2 = new EC2Client({ region: 'us-east-1', endpoint });
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: '10.20.0.0/16' }))).Vpc!.VpcId!;
  const subnetIds: string[] = [];
  for (const [i, az] of ['us-east-1a', 'us-east-1b'].entries()) {
    subnetIds.push((await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `10.20.${i}.0/24`, AvailabilityZone: az }))).Subnet!.SubnetId!);
  }
  const sg = (name: string, tags: Record<string, string>) =>
    ec2.send(
      new CreateSecurityGroupCommand({
        GroupName: name,
        Description: name,
        VpcId: vpc,
        TagSpecifications: [{ ResourceType: 'security-group', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
      }),
    );
  const clusterSgId = (await sg(`eks-cluster-sg-${CLUSTER}`, { 'aws:eks:cluster-name': CLUSTER })).GroupId!;
  const decoySgId = (await sg('decoy', { 'karpenter.sh/discovery': CLUSTER })).GroupId!;
  ec2.destroy();
  const dir = mkdtempSync(join(tmpdir(), 'infra-test-'));
  const envDir = join(dir, 'environments');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(envDir);
  writeFileSync(
    join(envDir, 'test.yaml'),
    [
      'cluster:',
      `  name: ${CLUSTER}`,
      '  region: us-east-1',
      '  kubernetesVersion: "1.36"',
      `  vpcId: ${vpc}`,
      `  privateSubnetIds: [${subnetIds.join(', ')}]`,
      '  publicAccessCidrs: [203.0.113.0/24]',
      `  identity: ${identity}`,
      'nodeClasses:',
      '  - name: default',
      'nodePools:',
      '  - name: default',
      '    nodeClass: default',
      '',
    ].join('\n'),
  );
  return { dir, envDir, outputsFile: join(dir, 'outputs', 'test.json'), vpcId: vpc, subnetIds, clusterSgId, decoySgId, standIn: emptyStandIn(), endpoint };
}

export interface RunOptions {
  /** Changes the clients before use: fault injection. */
  readonly tweak?: (clients: AwsClients) => void;
  readonly extraArgs?: readonly string[];
}

export interface Run extends CliResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process, as `npm run infra -- <command> --env test --endpoint-url <moto>` would. */
export async function infra(world: World, command: string, opts: RunOptions = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const res = await runCli(
    [command, '--env', 'test', '--endpoint-url', world.endpoint, '--environments-dir', world.envDir, '--outputs-file', world.outputsFile, ...(opts.extraArgs ?? [])],
    {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      pollMs: 10,
      retryBaseMs: 10,
      clients: async (o: ClientOptions) => {
        const clients = await createClients(o);
        installEksStandIn(clients.eks, world.standIn);
        opts.tweak?.(clients);
        return clients;
      },
    },
  );
  return { ...res, stdout: out.join('\n'), stderr: err.join('\n') };
}
