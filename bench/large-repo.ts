import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

const ROOT = join(import.meta.dirname, '..');
const PRESETS = ['spot-with-on-demand-fallback', 'spot-multi-arch', 'spot-small'] as const;

export interface LargeRepo {
  readonly root: string;
  readonly dispose: () => void;
}

/**
 * A scratch repository with `envs` environments of `pools` NodePools each (presets in
 * turn, one node class), their outputs files, a gitops.yaml with one destination per
 * environment (so argocd/ has 3 Applications per environment) and the vendored CRDs:
 * everything `npm run synth -- --root <root>` reads. Block-style YAML, as people write it.
 */
export function largeRepo(envs: number, pools: number): LargeRepo {
  const root = mkdtempSync(join(tmpdir(), `bench-repo-${envs}x${pools}-`));
  mkdirSync(join(root, 'environments'));
  mkdirSync(join(root, 'infra', 'outputs'), { recursive: true });
  cpSync(join(ROOT, 'crds'), join(root, 'crds'), { recursive: true });
  // Synth analyzes every pool against the region's catalogue: the large repo pays for it too.
  cpSync(join(ROOT, 'catalogue'), join(root, 'catalogue'), { recursive: true });
  const template = JSON.parse(readFileSync(join(ROOT, 'infra', 'outputs', 'dev.json'), 'utf8')) as Record<string, string>;
  const names = Array.from({ length: envs }, (_, e) => `env-${String(e).padStart(String(envs - 1).length, '0')}`);
  for (const name of names) {
    const environment = {
      cluster: { name, region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] },
      nodeClasses: [{ name: 'default' }],
      nodePools: Array.from({ length: pools }, (_, p) => ({ name: `pool-${p}`, preset: PRESETS[p % PRESETS.length], weight: (p % 100) + 1 })),
    };
    writeFileSync(join(root, 'environments', `${name}.yaml`), stringify(environment));
    const outputs = {
      ...template,
      clusterName: name,
      nodeRoleName: `KarpenterNodeRole-${name}`,
      nodeRoleArn: `arn:aws:iam::111122223333:role/KarpenterNodeRole-${name}`,
      controllerRoleArn: `arn:aws:iam::111122223333:role/KarpenterController-${name}`,
      interruptionQueueName: name,
      interruptionQueueArn: `arn:aws:sqs:us-east-1:111122223333:${name}`,
      kubeconfigCommand: `aws eks update-kubeconfig --region us-east-1 --name ${name}`,
    };
    writeFileSync(join(root, 'infra', 'outputs', `${name}.json`), `${JSON.stringify(outputs, null, 2)}\n`);
  }
  const gitops = {
    repository: { url: 'https://git.example.com/platform/karpenter-gitops.git', targetRevision: 'main' },
    argocd: { namespace: 'argocd', project: 'karpenter-gitops' },
    environments: Object.fromEntries(names.map((n) => [n, { destination: { name: n } }])),
  };
  writeFileSync(join(root, 'gitops.yaml'), stringify(gitops));
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

if (process.argv[1] === import.meta.filename) {
  const [envs, pools] = process.argv.slice(2).map(Number);
  process.stdout.write(`${largeRepo(envs ?? 1, pools ?? 1).root}\n`);
}
