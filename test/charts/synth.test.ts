import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { synthesize, type EnvironmentResult } from '../../charts/synth.js';
import { REPO, snapshotTree, tempRepo } from '../support/repo.js';

const result = synthesize({ root: REPO });
const env = (name: string): EnvironmentResult => result.environments.find((e) => e.environment.name === name)!;
const object = (name: string, kind: string, objName: string): any => {
  const found = env(name).objects.find((o) => o.kind === kind && o.metadata.name === objName);
  if (!found) throw new Error(`${name}: no ${kind} ${objName}`);
  return found;
};

describe('synth: one snapshot per environment', () => {
  it.each(['dev', 'staging', 'prod'])('%s', (name) => {
    expect(Object.fromEntries(env(name).files)).toMatchSnapshot();
  });

  it('the committed dist/ is exactly what synth produces (CI fails on stale files)', () => {
    const fresh: Record<string, string> = {};
    for (const e of result.environments) for (const [f, text] of e.files) fresh[join(e.environment.name, f)] = text;
    expect(snapshotTree(join(REPO, 'dist'))).toEqual(fresh);
  });
});

describe('prod: article 1 seed values', () => {
  const pool = object('prod', 'NodePool', 'default');
  const requirement = (key: string) => pool.spec.template.spec.requirements.find((r: any) => r.key === key);

  it('Spot first with On-Demand fallback, amd64, categories c/m/r, generation above 5', () => {
    expect(requirement('karpenter.sh/capacity-type')).toEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] });
    expect(requirement('kubernetes.io/arch')).toEqual({ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] });
    expect(requirement('karpenter.k8s.aws/instance-category')).toEqual({ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] });
    expect(requirement('karpenter.k8s.aws/instance-generation')).toEqual({ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] });
  });

  it('expireAfter 720h, cpu limit "100" as a string, consolidation and both budgets', () => {
    expect(pool.spec.template.spec.expireAfter).toBe('720h');
    expect(pool.spec.limits).toEqual({ cpu: '100' });
    expect(pool.spec.disruption).toEqual({
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }],
    });
    expect(pool.spec.template.spec.nodeClassRef).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
  });

  it('EC2NodeClass: AMI alias, node role from the outputs file, discovery tag from the cluster name', () => {
    const nc = object('prod', 'EC2NodeClass', 'default');
    expect(nc.spec.amiSelectorTerms).toEqual([{ alias: 'al2023@latest' }]);
    expect(nc.spec.role).toBe('KarpenterNodeRole-karpenter-prod');
    expect(nc.spec.subnetSelectorTerms).toEqual([{ tags: { 'karpenter.sh/discovery': 'karpenter-prod' } }]);
    expect(nc.spec.securityGroupSelectorTerms).toEqual([{ tags: { 'karpenter.sh/discovery': 'karpenter-prod' } }]);
  });

  it('inflate: pause 3.7 image, 0 replicas, 1 CPU request, grace period 0', () => {
    const d = object('prod', 'Deployment', 'inflate');
    const pod = d.spec.template.spec;
    expect(d.spec.replicas).toBe(0);
    expect(pod.terminationGracePeriodSeconds).toBe(0);
    expect(pod.containers[0].image).toBe('public.ecr.aws/eks-distro/kubernetes/pause:3.7');
    expect(pod.containers[0].resources.requests).toEqual({ cpu: '1' });
  });

  it('every object has an explicit name, the environment and managing tool labels, and no hash or timestamp', () => {
    for (const e of result.environments) {
      for (const o of e.objects) {
        expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'karpenter-gitops', 'karpenter-gitops/environment': e.environment.name });
        expect(o.metadata.name).toMatch(/^[a-z0-9-]+$/);
      }
      for (const text of e.files.values()) {
        expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T|cdk8s\.io\/metadata|-c8[0-9a-f]{6}/);
      }
    }
  });
});

describe('staging: article 2 shape', () => {
  it('Spot only, amd64 and arm64, six families, no tiny sizes, cpu 1000 and memory 1000Gi', () => {
    const pool = object('staging', 'NodePool', 'spot-compute');
    expect(pool.spec.template.spec.requirements).toEqual([
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5', 'c6g', 'm5', 'm6g', 'r5', 'r6g'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['nano', 'micro', 'small'] },
    ]);
    expect(pool.spec.limits).toEqual({ cpu: '1000', memory: '1000Gi' });
  });

  it('a pool overriding its preset: same-key requirements replace in place, new keys append', () => {
    const pool = object('staging', 'NodePool', 'batch');
    expect(pool.spec.template.spec.requirements.map((r: any) => r.key)).toEqual([
      'karpenter.sh/capacity-type',
      'kubernetes.io/arch',
      'karpenter.k8s.aws/instance-family',
      'karpenter.k8s.aws/instance-size',
      'karpenter.k8s.aws/instance-category',
    ]);
    expect(pool.spec.template.spec.taints).toEqual([{ key: 'workload-class', value: 'batch', effect: 'NoSchedule' }]);
    expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '10%' }] });
  });
});

describe('dev: cheap Spot-only pool with a small limit', () => {
  it('spot only and at most 16 vCPU', () => {
    const pool = object('dev', 'NodePool', 'default');
    expect(pool.spec.template.spec.requirements[0]).toEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] });
    expect(pool.spec.limits).toEqual({ cpu: '16', memory: '64Gi' });
  });
});

describe('synth is a pure function of its inputs', () => {
  let repo: ReturnType<typeof tempRepo> | undefined;
  afterEach(() => repo?.dispose());

  it('same inputs, byte-identical files', () => {
    const again = synthesize({ root: REPO });
    expect(again.environments.map((e) => Object.fromEntries(e.files))).toEqual(result.environments.map((e) => Object.fromEntries(e.files)));
  });

  it('the node role comes from the outputs file: change it and the EC2NodeClass follows', () => {
    repo = tempRepo();
    repo.editOutputs('dev', (o) => {
      o.nodeRoleName = 'CustomNodeRole';
      o.nodeRoleArn = 'arn:aws:iam::111122223333:role/CustomNodeRole';
    });
    const dev = synthesize({ root: repo.root, only: ['dev'] }).environments[0]!;
    expect((dev.objects.find((o) => o.kind === 'EC2NodeClass') as any).spec.role).toBe('CustomNodeRole');
  });

  it('problems in several outputs files are all reported, each line naming its own file', () => {
    repo = tempRepo();
    repo.editOutputs('dev', (o) => (o.clusterName = 'other'));
    repo.editOutputs('prod', (o) => delete o.nodeRoleArn);
    expect(() => synthesize({ root: repo!.root })).toThrow(
      'infra/outputs/dev.json: clusterName: must match environments/dev.yaml cluster.name "karpenter-dev", got "other" (re-run `npm run infra -- apply --env dev`)\n' +
        'infra/outputs/prod.json: (top level): is missing keys: nodeRoleArn',
    );
  });

  it('warns when a node class uses a role infra did not make (no PassRole, no access entry)', () => {
    repo = tempRepo();
    repo.editEnvironment('dev', (e) => {
      e.nodeClasses[0].role = 'MyNodeRole';
      e.nodeClasses.push({ name: 'other', instanceProfile: 'my-profile' });
    });
    expect(synthesize({ root: repo.root, only: ['dev'] }).warnings).toEqual([
      'environments/dev.yaml: nodeClasses[0].role: "MyNodeRole" is not the node role infra made; it needs iam:PassRole for Karpenter\'s controller and an EC2_LINUX access entry (infra grants both for KarpenterNodeRole-karpenter-dev only), or nodes will not launch or join',
      'environments/dev.yaml: nodeClasses[1].instanceProfile: "my-profile": its role needs iam:PassRole for Karpenter\'s controller and an EC2_LINUX access entry (infra grants both for KarpenterNodeRole-karpenter-dev only), or nodes will not launch or join',
    ]);
    expect(synthesize({ root: REPO, only: ['dev'] }).warnings).toEqual([]);
  });

  it('a pool cannot turn static (or back) in place: Karpenter refuses the update, so synth refuses the change', () => {
    repo = tempRepo({ withDist: true });
    repo.editEnvironment('prod', (e) => Object.assign(e.nodePools[0], { replicas: 3, limits: { nodes: '3' } }));
    expect(() => synthesize({ root: repo!.root, only: ['prod'] })).toThrow(
      'environments/prod.yaml: nodePools[0].replicas: cannot be added to an existing dynamic NodePool (dist/prod/NodePool.default.k8s.yaml): Karpenter refuses the transition on update; give the pool a new name',
    );
    repo.editEnvironment('prod', (e) => {
      e.nodePools[0].name = 'default-static';
      e.workloads[0].nodePool = 'default-static';
    });
    expect(() => synthesize({ root: repo!.root, only: ['prod'] })).not.toThrow();
  });

  it('outputs written for another cluster are refused, naming both files', () => {
    repo = tempRepo();
    repo.editOutputs('dev', (o) => {
      o.clusterName = 'other';
      o.region = 'eu-west-1';
    });
    expect(() => synthesize({ root: repo!.root, only: ['dev'] })).toThrow(
      'infra/outputs/dev.json: clusterName: must match environments/dev.yaml cluster.name "karpenter-dev", got "other" (re-run `npm run infra -- apply --env dev`)\n' +
        'infra/outputs/dev.json: region: must match environments/dev.yaml cluster.region "us-east-1", got "eu-west-1" (re-run `npm run infra -- apply --env dev`)',
    );
  });
});
