import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTPUT_KEYS, outputsSchema, readOutputs, renderDestroyedOutputs, renderOutputs, writeOutputs } from '../../config/outputs.js';
import { REPO, tempRepo } from '../support/repo.js';

describe('infra outputs contract', () => {
  let repo: ReturnType<typeof tempRepo> | undefined;
  afterEach(() => repo?.dispose());

  it('has exactly the keys SPEC 3 names, and the schema has one field per key', () => {
    expect([...OUTPUT_KEYS]).toEqual([
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
    ]);
    expect(Object.keys(outputsSchema.shape).sort()).toEqual([...OUTPUT_KEYS].sort());
  });

  it.each(['dev', 'staging', 'prod'])('the shipped %s outputs satisfy the contract and are in canonical form', (env) => {
    const file = join(REPO, 'infra', 'outputs', `${env}.json`);
    const outputs = readOutputs(file);
    expect(renderOutputs(outputs)).toBe(readFileSync(file, 'utf8'));
  });

  it('a missing file names the command that writes it and every key it must hold', () => {
    expect(() => readOutputs('infra/outputs/qa.json')).toThrow(
      'infra/outputs/qa.json: (top level): does not exist; run `npm run infra -- outputs --env <env>` after apply. It must hold: clusterName, region, accountId, kubernetesVersion, nodeRoleName, nodeRoleArn, controllerRoleArn, interruptionQueueName, interruptionQueueArn, karpenterChartVersion, kubeconfigCommand',
    );
  });

  it('lists every missing key at once, and every malformed one', () => {
    repo = tempRepo();
    const file = join(repo.root, 'infra/outputs/dev.json');
    repo.editOutputs('dev', (o) => {
      delete o.nodeRoleName;
      delete o.interruptionQueueArn;
      o.accountId = '1234';
    });
    expect(() => readOutputs(file)).toThrow(
      `${file}: (top level): is missing keys: nodeRoleName, interruptionQueueArn\n${file}: accountId: must be a 12-digit AWS account id, got "1234"`,
    );
  });

  it('rejects JSON that is not JSON, and unknown keys', () => {
    repo = tempRepo();
    const file = join(repo.root, 'infra/outputs/dev.json');
    writeFileSync(file, '{"clusterName": ');
    expect(() => readOutputs(file)).toThrow(/^.*dev\.json: \(top level\): is not valid JSON: /);
    repo.editOutputs('staging', (o) => (o.extra = 1));
    expect(() => readOutputs(join(repo!.root, 'infra/outputs/staging.json'))).toThrow(
      `${join(repo.root, 'infra/outputs/staging.json')}: (top level): unknown field "extra"`,
    );
  });

  it('writeOutputs writes keys in table order, atomically (no temp file left), and validates first', () => {
    repo = tempRepo();
    const file = join(repo.root, 'infra/outputs/new.json');
    const outputs = readOutputs(join(REPO, 'infra/outputs/dev.json'));
    const shuffled = Object.fromEntries(Object.entries(outputs).reverse()) as typeof outputs;
    writeOutputs(file, shuffled);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual([...OUTPUT_KEYS]);
    expect(readdirSync(join(repo.root, 'infra/outputs')).filter((f) => f.includes('.tmp'))).toEqual([]);
    expect(() => writeOutputs(file, { ...outputs, accountId: 'x' })).toThrow();
    expect(readOutputs(file)).toEqual(outputs);
  });
});

describe('outputs file: names AWS would refuse, names that disagree with their ARN, tombstones', () => {
  let repo: ReturnType<typeof tempRepo> | undefined;
  afterEach(() => repo?.dispose());

  it.each([
    [
      'a node role name with a space',
      (o: any) => {
        o.nodeRoleName = 'Karpenter Node';
        o.nodeRoleArn = 'arn:aws:iam::111122223333:role/Karpenter Node';
      },
      'infra/outputs/dev.json: nodeRoleName: must be an IAM role name: 1-64 letters, digits and +=,.@_-, got "Karpenter Node"',
    ],
    [
      'a node role name over 64 characters',
      (o: any) => {
        o.nodeRoleName = 'r'.repeat(65);
        o.nodeRoleArn = `arn:aws:iam::111122223333:role/${'r'.repeat(65)}`;
      },
      `infra/outputs/dev.json: nodeRoleName: must be an IAM role name: 1-64 letters, digits and +=,.@_-, got "${'r'.repeat(65)}"`,
    ],
    [
      'a queue URL where the queue name belongs',
      (o: any) => (o.interruptionQueueName = 'https://sqs.us-east-1.amazonaws.com/111122223333/karpenter-dev'),
      'infra/outputs/dev.json: interruptionQueueName: must be a standard SQS queue name: 1-80 letters, digits, "-" and "_", got "https://sqs.us-east-1.amazonaws.com/111122223333/karpenter-dev"',
    ],
    [
      'a FIFO queue name',
      (o: any) => {
        o.interruptionQueueName = 'karpenter-dev.fifo';
        o.interruptionQueueArn = 'arn:aws:sqs:us-east-1:111122223333:karpenter-dev.fifo';
      },
      'infra/outputs/dev.json: interruptionQueueName: must be a standard SQS queue name: 1-80 letters, digits, "-" and "_", got "karpenter-dev.fifo"',
    ],
    [
      'a node role name that is not the role of its ARN',
      (o: any) => (o.nodeRoleName = 'KarpenterNodeRole-other'),
      'infra/outputs/dev.json: nodeRoleArn: must be the ARN of nodeRoleName "KarpenterNodeRole-other", got "arn:aws:iam::111122223333:role/KarpenterNodeRole-karpenter-dev"',
    ],
    [
      'a queue name that is not the queue of its ARN',
      (o: any) => (o.interruptionQueueName = 'other'),
      'infra/outputs/dev.json: interruptionQueueArn: must be the ARN of interruptionQueueName "other", got "arn:aws:sqs:us-east-1:111122223333:karpenter-dev"',
    ],
  ])('GIVEN %s WHEN read THEN refused', (_, edit, message) => {
    repo = tempRepo();
    repo.editOutputs('dev', edit);
    expect(() => readOutputs(join(repo!.root, 'infra/outputs/dev.json'), 'infra/outputs/dev.json')).toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });

  it('GIVEN the tombstone destroy leaves WHEN read THEN refused with what happened and what to run', () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, 'infra/outputs/dev.json'), renderDestroyedOutputs('karpenter-dev'));
    expect(() => readOutputs(join(repo!.root, 'infra/outputs/dev.json'), 'infra/outputs/dev.json')).toThrow(
      /^infra\/outputs\/dev\.json: \(top level\): records that `npm run infra -- destroy` deleted cluster "karpenter-dev", its roles and its queue: nothing can be synthesized against it; run `npm run infra -- apply --env <env>` to recreate them \(it rewrites this file\), or remove the environment$/,
    );
    expect(renderDestroyedOutputs('karpenter-dev')).toBe('{\n  "destroyed": true,\n  "clusterName": "karpenter-dev"\n}\n');
  });
});
