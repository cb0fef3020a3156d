import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDiff } from '../../diff/cli.js';
import { REPO } from '../support/repo.js';
import { gitRepo } from './support.js';

/** The unit project has no simulation binary: these tests judge drift only (test/simulate/diff.test.ts runs the simulation). */
const NO_SIMULATION = { run: false, why: 'a unit test' } as const;

/** Pairs of configs: a base committed on main, a change on a branch, judged by `runDiff` against real git. */
let repo: ReturnType<typeof gitRepo> | undefined;
afterEach(() => {
  repo?.dispose();
  repo = undefined;
});

const pool = (doc: any, name: string) => doc.nodePools.find((p: any) => p.name === name);
const review = (env = 'prod') => {
  const result = runDiff({ root: repo!.root, base: 'main', env, simulate: NO_SIMULATION });
  return { ...result, objects: result.reviews[0]!.objects };
};

describe('npm run diff: drift of a NodePool change', () => {
  it('GIVEN prod drops instance category r WHEN diffed THEN the nodes labelled r drift (requirements), paced by the budgets', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').requirements = [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] }];
    });
    const { objects, drift, markdown } = review();
    expect(drift).toBe(true);
    expect(objects.map((o) => [o.kind, o.name, o.effect])).toEqual([['NodePool', 'default', 'replaces-some']]);
    const change = objects[0]!.changes[0]!;
    expect(change.path).toBe('spec.template.spec.requirements');
    expect(change.narrowing).toEqual([{ key: 'karpenter.k8s.aws/instance-category', excluded: ['r'], excludesOtherValues: false }]);
    expect(markdown).toContain('**drift**: nodes whose labels no longer satisfy the requirements drift (RequirementsDrifted): `karpenter.k8s.aws/instance-category`: `r`');
    expect(markdown).toContain('sigs.k8s.io/karpenter@v1.13.0 pkg/controllers/nodeclaim/disruption/drift.go `areRequirementsDrifted`');
    expect(markdown).toContain("- drift pacing: 10% of the pool's nodes (rounded up) at a time; none Mon-Fri 09:00-17:00 UTC");
    expect(markdown).toContain('- expireAfter 720h: every node is replaced by then anyway (forceful, budgets do not apply); no terminationGracePeriod:');
    // The analyzer's view of the same change: the r types leave the admitted set, nothing joins it.
    const { before, after } = objects[0]!.analysis!;
    const gone = before!.admitted.filter((t) => !after!.admitted.includes(t));
    expect(gone.length).toBeGreaterThan(0);
    expect(gone.every((t) => t.startsWith('r'))).toBe(true);
    expect(after!.admitted.every((t) => before!.admitted.includes(t))).toBe(true);
    expect(markdown).toContain(`- admitted instance types: ${before!.admitted.length} → ${after!.admitted.length}; no longer admitted: ${gone.length} types of \`${gone[0]!.split(".")[0]}\``);
  });

  it('GIVEN prod widens instance categories WHEN diffed THEN no node drifts', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').requirements = [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r', 'x'] }];
    });
    const { objects, drift } = review();
    expect(drift).toBe(false);
    expect(objects[0]!.changes.map((c) => [c.path, c.effect, c.why])).toEqual([
      ['spec.template.spec.requirements', 'none', 'only widens what the pool admits: every existing node still satisfies the requirements, none drifts'],
    ]);
  });

  it('GIVEN a limits change WHEN diffed THEN it is behavioural: no drift', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').limits = { cpu: '200' };
    });
    const { objects, drift, markdown } = review();
    expect(drift).toBe(false);
    expect(objects[0]!.changes.map((c) => [c.path, c.before, c.after, c.effect])).toEqual([['spec.limits.cpu', '100', '200', 'none']]);
    expect(markdown).toContain('**No change replaces nodes.**');
    expect(markdown).toContain('| NodePool `default` | `spec.limits.cpu` | not replaced |');
  });

  it('GIVEN a budget change WHEN diffed THEN it is behavioural: no drift', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'critical').disruption.budgets = [{ nodes: '2' }];
    });
    const { objects, drift } = review();
    expect(drift).toBe(false);
    expect(objects[0]!.changes.every((c) => c.effect === 'none' && c.path.startsWith('spec.disruption.budgets'))).toBe(true);
  });

  it('GIVEN a taint added WHEN diffed THEN every node of the pool drifts (hashed template field)', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'critical').taints.push({ key: 'dedicated', value: 'payments', effect: 'NoSchedule' });
    });
    const { objects } = review();
    expect(objects[0]!.changes.map((c) => [c.path, c.effect])).toEqual([['spec.template.spec.taints', 'replaces']]);
    expect(objects[0]!.changes[0]!.cite).toContain('sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/nodepool.go `NodePool.Hash()`');
  });
});

describe('npm run diff: drift of an EC2NodeClass change', () => {
  it('GIVEN the AMI alias pinned WHEN diffed THEN nodes not on that image drift (AMIDrift, dynamic), for both pools using the class', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].amiSelectorTerms = [{ alias: 'al2023@v20261115' }];
    });
    const { objects, drift, markdown } = review();
    expect(drift).toBe(true);
    expect(objects.map((o) => [o.kind, o.name, o.effect])).toEqual([['EC2NodeClass', 'default', 'replaces-some']]);
    expect(objects[0]!.changes.map((c) => [c.path, c.cite])).toEqual([['spec.amiSelectorTerms', 'github.com/aws/karpenter-provider-aws@v1.13.1 pkg/cloudprovider/drift.go `isAMIDrifted`']]);
    expect(markdown).toContain('- pool `critical`: drift pacing: 1 node at a time; none Mon-Fri 09:00-17:00 UTC.');
    expect(markdown).toContain("- pool `default`: drift pacing: 10% of the pool's nodes (rounded up) at a time; none Mon-Fri 09:00-17:00 UTC.");
  });

  it('GIVEN the AMI family changed through the alias WHEN diffed THEN the resolved family is hashed: every node drifts', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].amiSelectorTerms = [{ alias: 'bottlerocket@latest' }];
    });
    const { objects } = review();
    expect(objects[0]!.effect).toBe('replaces');
    expect(objects[0]!.changes.map((c) => [c.path, c.before, c.after, c.effect])).toEqual([
      ['spec.amiSelectorTerms', [{ alias: 'al2023@latest' }], [{ alias: 'bottlerocket@latest' }], 'replaces-some'],
      ['AMIFamily()', 'AL2023', 'Bottlerocket', 'replaces'],
    ]);
  });

  it('GIVEN a node class tag changed WHEN diffed THEN every node drifts: v1.13 hashes spec.tags (no hash:"ignore" on Tags)', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].tags = { team: 'payments' };
    });
    const { objects, markdown } = review();
    expect(objects[0]!.changes.map((c) => [c.path, c.before, c.after, c.effect])).toEqual([['spec.tags.team', 'platform', 'payments', 'replaces']]);
    expect(markdown).toContain('(tags have no `hash:"ignore"`: a tag change replaces the nodes) (github.com/aws/karpenter-provider-aws@v1.13.1 pkg/apis/v1/ec2nodeclass.go `EC2NodeClass.Hash()`');
  });

  it('GIVEN a node class renamed WHEN diffed THEN it is reported as a rename and the pools using it drift on nodeClassRef.name', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].name = 'general';
      for (const p of doc.nodePools) p.nodeClass = 'general';
    });
    const { objects, markdown } = review();
    expect(objects.map((o) => [o.kind, o.name, o.status, o.effect])).toEqual([
      ['EC2NodeClass', 'general', 'renamed', 'replaces'],
      ['NodePool', 'critical', 'changed', 'replaces'],
      ['NodePool', 'default', 'changed', 'replaces'],
    ]);
    expect(objects[1]!.changes.map((c) => c.path)).toEqual(['spec.template.spec.nodeClassRef.name']);
    expect(markdown).toContain('| EC2NodeClass `general` | renamed from `default` | **all replaced** |');
  });
});

describe('npm run diff: pools added and deleted', () => {
  it('GIVEN a pool deleted and one added WHEN diffed THEN the deleted pool drains all its nodes and the new one replaces none', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      const critical = pool(doc, 'critical');
      doc.nodePools = doc.nodePools.filter((p: any) => p !== critical);
      doc.nodePools.push({ ...critical, name: 'critical-v2' });
    });
    const { objects, markdown } = review();
    expect(objects.map((o) => [o.name, o.status, o.effect])).toEqual([
      ['critical', 'deleted', 'replaces'],
      ['critical-v2', 'added', 'none'],
    ]);
    expect(markdown).toContain('| NodePool `critical` | deleted | **all drain** |');
    expect(markdown).toContain('**every node of the pool drains and terminates**; budgets do not pace this');
  });
});

describe('npm run diff: the base and the command line', () => {
  it('GIVEN no --base WHEN main moved on after the branch THEN the base is the merge base, not main', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      pool(doc, 'default').limits = { cpu: '300' };
    });
    repo.synthAndCommit('feature: limits');
    repo.git('checkout', '-q', 'main');
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].tags = { team: 'main-only' };
    });
    repo.synthAndCommit('main: tags');
    repo.git('checkout', '-q', 'feature');
    const result = runDiff({ root: repo.root, env: 'prod', simulate: NO_SIMULATION });
    expect(result.markdown).toMatch(/^## Karpenter review against `merge base of HEAD and main` \([0-9a-f]{12}\)$/m);
    expect(result.reviews[0]!.objects.map((o) => [o.name, o.changes.map((c) => c.path)])).toEqual([['default', ['spec.limits.cpu']]]);
  });

  it('GIVEN a drifting change WHEN the CLI runs with and without --fail-on drift THEN it exits 1 and 0, printing the same Markdown', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.nodeClasses[0].tags = { team: 'payments' };
    });
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'diff', 'main.ts'), '--root', repo!.root, '--base', 'main', '--env', 'prod', '--no-simulate', ...args], { encoding: 'utf8' });
    const plain = run();
    const strict = run('--fail-on', 'drift');
    expect([plain.status, strict.status]).toEqual([0, 1]);
    expect(strict.stdout).toBe(plain.stdout);
    expect(plain.stdout).toContain('**1 change replaces nodes** (Karpenter v1.13 drift): `prod/EC2NodeClass/default`.');
  });

  it('GIVEN a change after which a workload fits nowhere WHEN the CLI runs THEN it prints why there is no review, as Markdown, and exits 2', () => {
    repo = gitRepo();
    repo.editEnvironment('prod', (doc) => {
      doc.workloads[0].resources = { requests: { cpu: '500', memory: '128Mi' }, limits: { memory: '128Mi' } };
    });
    const out = spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'diff', 'main.ts'), '--root', repo.root, '--base', 'main', '--env', 'prod'], { encoding: 'utf8' });
    expect(out.status).toBe(2);
    expect(out.stdout).toMatch(/^## Karpenter review\n\n\*\*The change does not synthesize\*\*, so Argo CD could not sync it either:\n\n- environments\/prod\.yaml: workloads\[0\]: workload "checkout-api" needs 500 CPU/);
  });

  it('GIVEN an unknown base ref or --fail-on value WHEN the CLI runs THEN it exits 2 naming the bad value', () => {
    repo = gitRepo();
    const run = (...args: string[]) => spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'diff', 'main.ts'), '--root', repo!.root, ...args], { encoding: 'utf8' });
    const badRef = run('--base', 'no-such-branch');
    expect(badRef.status).toBe(2);
    expect(badRef.stderr).toBe(`error: --base: must name a commit in ${repo.root}, got "no-such-branch"\nUsage: npm run diff [-- --base <git ref>] [--env <name>] [--fail-on drift|pending]... [--no-simulate]\n`);
    const badFail = run('--fail-on', 'everything');
    expect(badFail.status).toBe(2);
    expect(badFail.stderr.split('\n')[0]).toBe('error: --fail-on: must be one of "drift", "pending", got "everything"');
  });

  it('GIVEN no change WHEN diffed twice THEN the output is byte-identical and says nothing is replaced', () => {
    repo = gitRepo();
    const a = runDiff({ root: repo.root, base: 'main', simulate: NO_SIMULATION }).markdown;
    const b = runDiff({ root: repo.root, base: 'main', simulate: NO_SIMULATION }).markdown;
    expect(a).toBe(b);
    expect(a).toContain('**No change replaces nodes.**');
    expect(execFileSync('git', ['-C', repo.root, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');
  });
});

describe('npm run diff: environments added and removed', () => {
  it('GIVEN the change deletes an environment WHEN diffed with --env THEN its pools are deleted and drain', () => {
    repo = gitRepo();
    rmSync(join(repo.root, 'environments', 'dev.yaml'));
    const result = runDiff({ root: repo.root, base: 'main', env: 'dev', simulate: NO_SIMULATION });
    expect(result.reviews.map((r) => [r.environment, r.status])).toEqual([['dev', 'deleted']]);
    expect(result.reviews[0]!.objects.filter((o) => o.kind === 'NodePool').map((o) => [o.name, o.status, o.effect])).toEqual([['default', 'deleted', 'replaces']]);
    expect(result.markdown).toContain('### dev (environment removed)');
  });
});
