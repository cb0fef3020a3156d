import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { snapshotTree, tempRepo } from '../support/repo.js';
import { ROOT } from './fixtures.js';

const run = promisify(execFile);

describe('npm run synth with a manifest the CRD rejects', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN a capacity reservation term with both id and tags (zod accepts it; a CEL rule of the CRD does not) WHEN synthesized THEN exit 1, the CEL message at the environment file and field that produced it, with the value, dist/ untouched', async () => {
    dir = mkdtempSync(join(tmpdir(), 'synth-validate-'));
    cpSync(join(ROOT, 'environments', 'dev.yaml'), join(dir, 'environments', 'dev.yaml'));
    cpSync(join(ROOT, 'infra', 'outputs', 'dev.json'), join(dir, 'infra', 'outputs', 'dev.json'));
    const envFile = join(dir, 'environments', 'dev.yaml');
    const text = readFileSync(envFile, 'utf8');
    expect(text).toMatch(/^nodeClasses:\n {2}- name: default\n/m);
    writeFileSync(envFile, text.replace(/^nodeClasses:\n {2}- name: default\n/m, 'nodeClasses:\n  - name: default\n    capacityReservationSelectorTerms: [{id: cr-0123456789abcdef0, tags: {team: a}}]\n'));
    cpSync(join(ROOT, 'dist', 'dev'), join(dir, 'dist', 'dev'), { recursive: true });
    const before = readdirSync(join(dir, 'dist', 'dev')).map((f) => readFileSync(join(dir!, 'dist', 'dev', f), 'utf8'));

    const result = await run(process.execPath, [join(ROOT, 'scripts/run.mjs'), join(ROOT, 'charts', 'main.ts'), '--root', dir, '--env', 'dev'], { cwd: ROOT }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: invalid input, nothing was written\n' +
        "environments/dev.yaml: nodeClasses[0].capacityReservationSelectorTerms: 'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term (EC2NodeClass/default spec.capacityReservationSelectorTerms), got [{\"id\":\"cr-0123456789abcdef0\",\"tags\":{\"team\":\"a\"}}]\n",
    );
    expect(readdirSync(join(dir, 'dist', 'dev')).map((f) => readFileSync(join(dir!, 'dist', 'dev', f), 'utf8'))).toEqual(before);
  });
});

/** The real command on a throwaway copy of the repository. */
async function synth(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [join(ROOT, 'scripts/run.mjs'), join(ROOT, 'charts', 'main.ts'), '--root', root], { cwd: ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

describe('npm run synth with values Karpenter, the kubelet or AWS would refuse although the CRDs accept them', () => {
  it('GIVEN several such values in dev.yaml WHEN synthesized THEN exit 1, every one named with its field and value, dist/ byte-identical', async () => {
    const repo = tempRepo({ withDist: true });
    try {
      repo.editEnvironment('dev', (e) => {
        Object.assign(e.nodePools[0], {
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spott'] }],
          taints: [{ key: 'example.com/x', value: 'v'.repeat(64), effect: 'NoSchedule' }],
          expireAfter: '9999999999h',
          limits: { memroy: '64Gi' },
        });
        e.nodeClasses[0].kubelet = { clusterDNS: ['kube-dns'] };
      });
      const before = snapshotTree(join(repo.root, 'dist'));
      const result = await synth(repo.root);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n')).toEqual([
        'error: invalid input, nothing was written',
        'environments/dev.yaml: nodeClasses[0].kubelet.clusterDNS[0]: must be an IP address such as 10.100.0.10 or fd00::a, got "kube-dns"',
        'environments/dev.yaml: nodePools[0].requirements[0].values: must include one of on-demand, spot, reserved for karpenter.sh/capacity-type (Karpenter refuses the NodePool otherwise), got ["spott"]',
        `environments/dev.yaml: nodePools[0].taints[0].value: must have a name part (after the "/") of at most 63 characters (Kubernetes' IsQualifiedName); this one has 64, got "${'v'.repeat(64)}"`,
        "environments/dev.yaml: nodePools[0].expireAfter: must be at most 2562047h47m16s (Go's time.ParseDuration limit of 2^63-1 ns: Karpenter cannot decode a longer duration), got \"9999999999h\"",
        'environments/dev.yaml: nodePools[0].limits.memroy: key must be a resource name: cpu, memory, ephemeral-storage, pods, nodes, or an extended resource with its domain such as nvidia.com/gpu, got "memroy"',
        '',
      ]);
      expect(snapshotTree(join(repo.root, 'dist'))).toEqual(before);
    } finally {
      repo.dispose();
    }
  });

  it('GIVEN labels "0o17" and node-role.kubernetes.io/spot: "" WHEN synthesized THEN exit 0 and the NodePool file reads back as those strings in YAML 1.1', async () => {
    const repo = tempRepo({ withDist: true });
    try {
      repo.editEnvironment('dev', (e) => (e.nodePools[0].labels = { team: '0o17', 'node-role.kubernetes.io/spot': '' }));
      const result = await synth(repo.root);
      expect(result.code, result.stderr).toBe(0);
      const text = readFileSync(join(repo.root, 'dist', 'dev', 'NodePool.default.k8s.yaml'), 'utf8');
      expect(text).toContain('team: "0o17"');
      expect(parse(text, { version: '1.1' }).spec.template.metadata.labels).toMatchObject({ team: '0o17', 'node-role.kubernetes.io/spot': '' });
    } finally {
      repo.dispose();
    }
  });
});
