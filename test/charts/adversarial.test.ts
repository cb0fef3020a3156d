import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkout, generatedState, leftovers, synthCli, synthInProcess } from '../support/generated.js';

/**
 * Inputs a careless or hostile user gives `npm run synth` (issue 9 §2). Each goes through
 * synth's command (charts/cli.ts, from the command line on) on a checkout whose dev.yaml
 * also carries a valid change, so that a run that wrote anything would change dist/ or
 * argocd/. Every case: the exact stderr, exit 1, and dist/, argocd/,
 * environments/schema.json, the environment and outputs files byte-identical afterwards,
 * with no temp file left. The cases marked `process` run as `npm run synth` does (a Node
 * process through scripts/run.mjs); the others run the same command in this process,
 * which costs no Node start-up per case.
 */

/**
 * Ten anchors, each a list of ten aliases of the previous one: 10^10 values once expanded.
 * The aliases before a4 expand to 12,330 values, each *a3 to 11,111: the 8th alias of a4
 * (a4[7], column 45) is the one that crosses 100,000.
 */
function aliasBomb(): string {
  let text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 10; i += 1) text += `a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]\n`;
  return text;
}

/** Outside the repository: its contents must never reach a message. */
const SECRET_DIR = join(mkdtempSync(join(tmpdir(), 'karpenter-gitops-outside-')), 'outside');

interface Case {
  readonly setup?: (root: string) => void;
  readonly args?: readonly string[];
  readonly stderr: string;
  /** Run as a real process (exit status, stdout and stderr of the process itself). */
  readonly process?: true;
}

const INVALID = 'error: invalid input, nothing was written\n';

const CASES: Record<string, Case> = {
  'an alias bomb': {
    process: true,
    setup: (root) => writeFileSync(join(root, 'environments/bomb.yaml'), aliasBomb()),
    stderr: `${INVALID}environments/bomb.yaml:5:45: a4[7]: is not valid YAML: alias *a3 makes the document expand to more than 100,000 values (nested aliases multiply: an alias bomb?); use fewer aliases\ngitops.yaml: environments: has no entry for environment "bomb" (environments/bomb.yaml); add a destination or fleet for it\n`,
  },
  'an unresolved alias': {
    setup: (root) => edit(root, 'dev', (t) => t.replace('preset: spot-small', 'preset: *nope')),
    stderr: `${INVALID}environments/dev.yaml:22:13: nodePools[0].preset: is not valid YAML: alias *nope names no anchor; define &nope on an earlier value first\n`,
  },
  'an alias inside the value it names': {
    setup: (root) => appendFileSync(join(root, 'environments/dev.yaml'), 'workloads: &w [*w]\n'),
    stderr: `${INVALID}environments/dev.yaml:23:16: workloads[0]: is not valid YAML: alias *w is inside the value it names (a value cannot contain itself)\n`,
  },
  // Line numbers: dev.yaml as rewritten by editEnvironment (no comments) ends with nodePools at 17-19.
  'a duplicate key': {
    setup: (root) => appendFileSync(join(root, 'environments/dev.yaml'), 'karpenter: {}\n'),
    stderr: `${INVALID}environments/dev.yaml:23:1: (top level): is not valid YAML: Map keys must be unique\n`,
  },
  // zod and plain JavaScript objects drop an own __proto__ key silently: the tag would vanish from the EC2NodeClass.
  'a tag named __proto__': {
    setup: (root) => edit(root, 'dev', (t) => t.replace('nodeClasses:\n  - name: default\n', 'nodeClasses:\n  - name: default\n    tags:\n      team: platform\n      "__proto__": hostile\n')),
    stderr: `${INVALID}environments/dev.yaml:22:7: nodeClasses[0].tags.__proto__: key "__proto__" is not allowed: it names the JavaScript object prototype, which this toolchain cannot carry as a key (it would be dropped from the manifests); rename the key\n`,
  },
  'dev.yml beside dev.yaml': {
    setup: (root) => cpSync(join(root, 'environments/dev.yaml'), join(root, 'environments/dev.yml')),
    stderr: `${INVALID}environments/dev.yml: (top level): defines environment "dev" a second time (environments/dev.yaml defines it too); keep one of the two files\n`,
  },
  'qa.YAML': {
    setup: (root) => cpSync(join(root, 'environments/dev.yaml'), join(root, 'environments/qa.YAML')),
    stderr: `${INVALID}environments/qa.YAML: (top level): environment files end in lowercase .yaml, got "qa.YAML"; rename it to qa.yaml\n`,
  },
  'a workload named karpenter in kube-system': {
    setup: (root) =>
      appendFileSync(
        join(root, 'environments/dev.yaml'),
        'workloads:\n  - name: karpenter\n    namespace: kube-system\n    image: public.ecr.aws/nginx/nginx:1.27\n    resources: {requests: {cpu: 100m, memory: 64Mi}}\n',
      ),
    stderr: `${INVALID}environments/dev.yaml:24:11: workloads[0].name: must not be "karpenter" in namespace kube-system: the Karpenter chart (Application dev-karpenter) renders Deployment and PodDisruptionBudget kube-system/karpenter too, and two Applications would fight over them; rename the workload\n`,
  },
  'a symlink to /dev/zero': {
    setup: (root) => symlinkSync('/dev/zero', join(root, 'environments/zero.yaml')),
    stderr: `${INVALID}environments/zero.yaml: (top level): must be a file inside the repository, got a symbolic link that leads outside it (its contents are not read)\ngitops.yaml: environments: has no entry for environment "zero" (environments/zero.yaml); add a destination or fleet for it\n`,
  },
  'a FIFO': {
    process: true,
    setup: (root) => execFileSync('mkfifo', [join(root, 'environments/fifo.yaml')]),
    stderr: `${INVALID}environments/fifo.yaml: (top level): must be a regular file, got a FIFO (named pipe)\ngitops.yaml: environments: has no entry for environment "fifo" (environments/fifo.yaml); add a destination or fleet for it\n`,
  },
  'a symlink to a file outside the repository': {
    setup: (root) => symlinkSync(join(SECRET_DIR, 'secret.yaml'), join(root, 'environments/leak.yaml')),
    stderr: `${INVALID}environments/leak.yaml: (top level): must be a file inside the repository, got a symbolic link that leads outside it (its contents are not read)\ngitops.yaml: environments: has no entry for environment "leak" (environments/leak.yaml); add a destination or fleet for it\n`,
  },
  'a dangling symlink': {
    setup: (root) => symlinkSync('gone.yaml', join(root, 'environments/qa.yaml')),
    stderr: `${INVALID}environments/qa.yaml: (top level): is a symbolic link to a file that does not exist\ngitops.yaml: environments: has no entry for environment "qa" (environments/qa.yaml); add a destination or fleet for it\n`,
  },
  'a directory named like an environment file': {
    setup: (root) => mkdirSync(join(root, 'environments/qa.yaml')),
    stderr: `${INVALID}environments/qa.yaml: (top level): must be a regular file, got a directory\ngitops.yaml: environments: has no entry for environment "qa" (environments/qa.yaml); add a destination or fleet for it\n`,
  },
  'a 2 MB environment file': {
    setup: (root) => writeFileSync(join(root, 'environments/qa.yaml'), `# ${'x'.repeat(2_000_000)}\n`),
    stderr: `${INVALID}environments/qa.yaml: (top level): is 2,000,003 bytes; input files may be at most 1,048,576 bytes (1 MiB)\ngitops.yaml: environments: has no entry for environment "qa" (environments/qa.yaml); add a destination or fleet for it\n`,
  },
  'invalid UTF-8': {
    setup: (root) => edit(root, 'dev', (t) => t.replace('name: karpenter-dev', 'name: karpenter-d\u00e9v'), 'latin1'),
    stderr: `${INVALID}environments/dev.yaml:2:20: (top level): is not valid UTF-8 (byte 0xe9); save the file as UTF-8\n`,
  },
  'an outputs file that is a FIFO': {
    setup: (root) => {
      execFileSync('mv', [join(root, 'infra/outputs/dev.json'), join(root, 'dev.json.bak')]);
      execFileSync('mkfifo', [join(root, 'infra/outputs/dev.json')]);
    },
    stderr: `${INVALID}infra/outputs/dev.json: (top level): must be a regular file, got a FIFO (named pipe)\n`,
  },
  'gitops.yaml behind a symlink out of the repository': {
    setup: (root) => {
      execFileSync('rm', [join(root, 'gitops.yaml')]);
      symlinkSync(join(SECRET_DIR, 'secret.yaml'), join(root, 'gitops.yaml'));
    },
    stderr: `${INVALID}gitops.yaml: (top level): must be a file inside the repository, got a symbolic link that leads outside it (its contents are not read)\n`,
  },
  '--env=': { args: ['--env='], stderr: 'error: --env must name environments, such as --env dev or --env dev,prod, got "". Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]\n' },
  '--env ,': { args: ['--env', ','], stderr: 'error: --env must name environments, such as --env dev or --env dev,prod, got ",". Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]\n' },
  '--env dev,': { args: ['--env', 'dev,'], stderr: 'error: --env must name environments, such as --env dev or --env dev,prod, got "dev,". Usage: npm run synth [-- --env <name>[,<name>...]] [--root <repository>] [--render-charts]\n' },
  '--root /nonexistent': { process: true, args: ['--root', '/nonexistent'], stderr: 'error: --root /nonexistent: no such directory\n' },
  '--root naming a file': { args: ['--root', '/etc/hostname'], stderr: 'error: --root /etc/hostname: not a directory\n' },
};

function edit(root: string, env: string, change: (text: string) => string, encoding: BufferEncoding = 'utf8'): void {
  const file = join(root, 'environments', `${env}.yaml`);
  writeFileSync(file, change(readFileSync(file, 'utf8')), encoding);
}

describe('adversarial inputs through the real npm run synth', () => {
  let repo: ReturnType<typeof checkout> | undefined;
  beforeAll(() => {
    mkdirSync(SECRET_DIR, { recursive: true });
    writeFileSync(join(SECRET_DIR, 'secret.yaml'), 'SECRET-TOKEN-1234: do not print\n');
  });
  afterAll(() => execFileSync('rm', ['-rf', join(SECRET_DIR, '..')]));
  afterEach(() => repo?.dispose());

  it.each(Object.entries(CASES))('GIVEN %s THEN exit 1 with the exact message, nothing written, nothing echoed', async (_name, c) => {
    repo = checkout();
    // A valid change too: had the run written anything, dist/ and argocd/ would differ.
    repo.editEnvironment('dev', (e) => (e.karpenter.replicas = 2));
    c.setup?.(repo.root);
    const before = generatedState(repo.root);
    const r = c.process ? synthCli(repo.root, c.args) : await synthInProcess(repo.root, c.args);
    expect(r.stderr).toBe(c.stderr);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('SECRET');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(generatedState(repo.root)).toEqual(before);
    expect(leftovers(repo.root)).toEqual([]);
  });

  it('GIVEN one anchor used 120 times (a real file, not a bomb) THEN synth accepts it', async () => {
    repo = checkout();
    let text = readFileSync(join(repo.root, 'environments/dev.yaml'), 'utf8').replace('    preset: spot-small\n', '    preset: spot-small\n    labels: &team {team: platform}\n');
    for (let i = 1; i <= 120; i += 1) text += `  - {name: p${i}, preset: spot-small, labels: *team}\n`;
    writeFileSync(join(repo.root, 'environments/dev.yaml'), text);
    const r = await synthInProcess(repo.root, ['--env', 'dev']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^synthesized dev \(124 objects\) into dist\//);
    expect(readFileSync(join(repo.root, 'dist/dev/NodePool.p120.k8s.yaml'), 'utf8')).toContain('team: platform');
  });
});
