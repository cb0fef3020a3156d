import { readFileSync } from 'node:fs';
import { parse, type Tags } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MANAGED } from '../../infra/desired.js';
import {
  INLINE_POLICY_LIMIT,
  INTERRUPTION_RULES,
  RULE_TARGET_ID,
  controllerPolicyJson,
  controllerStatements,
  queuePolicy,
  rulePattern,
  type PolicyContext,
} from '../../infra/policies.js';

// The vendored upstream template is the reference; CloudFormation intrinsics are read as
// markers and substituted with the same values the code gets.
const customTags: Tags = [
  { tag: '!Sub', resolve: (s: string) => ({ Sub: s }) },
  { tag: '!GetAtt', resolve: (s: string) => ({ Sub: `\${${s}}` }) },
  { tag: '!Ref', resolve: (s: string) => ({ Ref: s }) },
];
const template = parse(readFileSync('infra/reference/cloudformation.yaml', 'utf8'), { customTags }) as {
  Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
};

const ctx: PolicyContext = {
  partition: 'aws',
  region: 'eu-west-1',
  accountId: '111122223333',
  clusterName: 'prod-eu',
  nodeRoleArn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eu',
  queueArn: 'arn:aws:sqs:eu-west-1:111122223333:prod-eu',
};
const vars: Record<string, string> = {
  ClusterName: ctx.clusterName,
  'AWS::Partition': ctx.partition,
  'AWS::Region': ctx.region,
  'AWS::AccountId': ctx.accountId,
  'AWS::URLSuffix': 'amazonaws.com',
  'KarpenterNodeRole.Arn': ctx.nodeRoleArn,
  'KarpenterInterruptionQueue.Arn': ctx.queueArn,
};
const sub = (text: string) =>
  text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`template uses \${${name}}, which the test does not substitute`);
    return vars[name]!;
  });
/** Replaces every `{Sub: "..."}` marker in a parsed YAML tree. */
const resolve = (v: any): any =>
  Array.isArray(v) ? v.map(resolve) : v && typeof v === 'object' ? ('Sub' in v ? sub(v.Sub) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]))) : v;

const templateControllerStatements = Object.values(template.Resources)
  .filter((r) => r.Type === 'AWS::IAM::ManagedPolicy')
  .flatMap((r) => JSON.parse(sub(r.Properties.PolicyDocument.Sub)).Statement);

describe('controller policy', () => {
  it('GIVEN the vendored template WHEN its six managed policies are read THEN they hold 18 statements, and so does the code', () => {
    expect(templateControllerStatements).toHaveLength(18);
    expect(controllerStatements(ctx)).toHaveLength(18);
  });

  it.each(templateControllerStatements.map((s: { Sid: string }, i: number) => [s.Sid, i] as const))(
    'GIVEN statement %s WHEN built in code THEN it equals the template statement',
    (_sid, i) => {
      expect(controllerStatements(ctx)[i]).toEqual(templateControllerStatements[i]);
    },
  );

  it('GIVEN a 100-character cluster name WHEN the inline policy is serialized THEN it is compact and under IAM limit', () => {
    const long = 'c'.repeat(100);
    const json = controllerPolicyJson({ ...ctx, clusterName: long, nodeRoleArn: `arn:aws:iam::111122223333:role/KarpenterNodeRole-${long}`, queueArn: `arn:aws:sqs:eu-west-1:111122223333:${long}` });
    expect(json).not.toMatch(/\s/);
    expect(json.length).toBeLessThan(INLINE_POLICY_LIMIT);
    expect(JSON.parse(json).Statement).toHaveLength(18);
  });
});

describe('interruption queue', () => {
  const q = template.Resources.KarpenterInterruptionQueue!.Properties;
  it('GIVEN the template queue WHEN compared THEN retention is 300 s and SSE is SQS-managed (what apply sets)', () => {
    expect(q.MessageRetentionPeriod).toBe(300);
    expect(q.SqsManagedSseEnabled).toBe(true);
  });

  it('GIVEN the template queue policy WHEN compared statement by statement THEN the code builds the same', () => {
    const doc = resolve(template.Resources.KarpenterInterruptionQueuePolicy!.Properties.PolicyDocument);
    const ours = queuePolicy(ctx.queueArn);
    expect(ours.Id).toBe(doc.Id);
    expect(ours.Statement).toEqual(doc.Statement);
  });
});

describe('EventBridge rules', () => {
  const rules = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Events::Rule');
  it('GIVEN the template WHEN its rules are listed THEN there are five and the code has the same five in order', () => {
    expect(rules.map(([id]) => id)).toEqual(INTERRUPTION_RULES.map((r) => r.logicalId));
  });

  it.each(INTERRUPTION_RULES.map((r) => [r.detailType, r] as const))('GIVEN rule "%s" THEN source, detail-type and target id equal the template', (_d, rule) => {
    const r = template.Resources[rule.logicalId]!.Properties;
    expect(JSON.parse(rulePattern(rule))).toEqual(r.EventPattern);
    expect(r.Targets).toEqual([{ Id: RULE_TARGET_ID, Arn: { Sub: '${KarpenterInterruptionQueue.Arn}' } }]);
  });
});

describe('Karpenter node role', () => {
  it('GIVEN the template node role THEN the four managed policies are the ones apply attaches', () => {
    const arns = resolve(template.Resources.KarpenterNodeRole!.Properties.ManagedPolicyArns) as string[];
    expect(arns).toEqual(MANAGED.karpenterNode.map((n) => `arn:aws:iam::aws:policy/${n}`));
  });
});
