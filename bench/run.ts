/**
 * `npm run bench`: speed and memory of the synth path, each reported as a ratio
 * against the alternative measured in the same run on the same inputs. Nothing here
 * asserts a time; it prints a table.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { stringify } from 'yaml';
import { replaceDirectories } from '../config/atomic.js';
import { loadEnvironments } from '../config/environment.js';
import { readOutputs } from '../config/outputs.js';
import { EnvironmentChart } from '../charts/environment-chart.js';
import { synthesize } from '../charts/synth.js';
import { median, type BenchRow } from './measure.js';
import { benchValidate } from './validate.js';
import { benchSimulate } from './simulate.js';

const ROOT = join(import.meta.dirname, '..');

type Row = BenchRow;

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

/** A repo with `envs` environments of `pools` NodePools each, to see how synth scales. */
function largeRepo(envs: number, pools: number): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-repo-'));
  mkdirSync(join(root, 'environments'));
  mkdirSync(join(root, 'infra/outputs'), { recursive: true });
  const template = readOutputs(join(ROOT, 'infra/outputs/dev.json'));
  const presets = ['spot-with-on-demand-fallback', 'spot-multi-arch', 'spot-small'] as const;
  for (let e = 0; e < envs; e++) {
    const name = `env-${String(e).padStart(3, '0')}`;
    const env = {
      cluster: { name, region: 'us-east-1', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] },
      nodeClasses: [{ name: 'default' }],
      nodePools: Array.from({ length: pools }, (_, p) => ({ name: `pool-${p}`, preset: presets[p % 3], weight: p + 1 })),
    };
    writeFileSync(join(root, 'environments', `${name}.yaml`), stringify(env));
    writeFileSync(join(root, 'infra/outputs', `${name}.json`), JSON.stringify({ ...template, clusterName: name, interruptionQueueName: name }));
  }
  return root;
}

/** The alternative writer: cdk8s's own App.synth() in FOLDER_PER_CHART_FILE_PER_RESOURCE mode (no validation of inputs across files, not atomic). */
function cdk8sNativeSynth(root: string, outdir: string): void {
  const envs = loadEnvironments(join(root, 'environments'), undefined, root);
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FOLDER_PER_CHART_FILE_PER_RESOURCE });
  for (const environment of envs) new EnvironmentChart(app, { environment, outputs: readOutputs(join(root, 'infra/outputs', `${environment.name}.json`)) });
  app.synth();
}

/** Our path: synthesize in memory, then swap the directory in atomically. */
function oursSynth(root: string, outdir: string): void {
  const result = synthesize({ root });
  const files = new Map<string, string>();
  for (const e of result.environments) for (const [f, t] of e.files) files.set(join(e.environment.name, f), t);
  replaceDirectories(new Map([[outdir, files]]));
}

function inProcess(label: string, root: string, runs: number): Row {
  const out = mkdtempSync(join(tmpdir(), 'bench-out-'));
  try {
    const ours = median(runs, () => oursSynth(root, join(out, 'ours')));
    const alt = median(runs, () => {
      rmSync(join(out, 'alt'), { recursive: true, force: true });
      cdk8sNativeSynth(root, join(out, 'alt'));
    });
    return { what: label, ours: fmt(ours), alternative: `${fmt(alt)} (cdk8s App.synth)`, ratio: `${(ours / alt).toFixed(2)}x` };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function heapOf(fn: () => void): number {
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  fn();
  return (process.memoryUsage().heapUsed - before) / 1024 / 1024;
}

function wholeProcess(runs: number): Row {
  const out = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) => () => {
    const r = spawnSync(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  };
  try {
    const ours = median(runs, run(process.execPath, ['--import', 'tsx', 'charts/main.ts'], { CDK8S_OUTDIR: join(out, 'a') }));
    const alt = median(runs, run(join(ROOT, 'node_modules/.bin/cdk8s'), ['synth', '--output', join(out, 'b')]));
    return { what: 'whole process, shipped envs (dist/ and argocd/)', ours: `${fmt(ours)} (node --import tsx)`, alternative: `${fmt(alt)} (cdk8s synth: same app via the cdk8s CLI)`, ratio: `${(ours / alt).toFixed(2)}x` };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
const shipped = synthesize({ root: ROOT }).environments.reduce((n, e) => n + e.objects.length, 0);
rows.push(inProcess(`in-process synth, shipped envs (${shipped} objects)`, ROOT, 20));
const big = largeRepo(100, 10);
try {
  rows.push(inProcess('in-process synth, 100 envs x 10 NodePools (1,300 objects)', big, 3));
  const out = mkdtempSync(join(tmpdir(), 'bench-mem-'));
  const oursHeap = heapOf(() => oursSynth(big, join(out, 'a')));
  const altHeap = heapOf(() => cdk8sNativeSynth(big, join(out, 'b')));
  rmSync(out, { recursive: true, force: true });
  rows.push({ what: 'heap growth, 1,300 objects', ours: `${oursHeap.toFixed(1)} MiB`, alternative: `${altHeap.toFixed(1)} MiB (cdk8s App.synth)`, ratio: `${(oursHeap / altHeap).toFixed(2)}x` });
} finally {
  rmSync(big, { recursive: true, force: true });
}
rows.push(wholeProcess(3));
rows.push(...(await benchValidate()).rows);
rows.push(...benchSimulate().rows);

const width = (k: keyof Row) => Math.max(k.length, ...rows.map((r) => r[k].length));
const line = (r: Row) => (['what', 'ours', 'alternative', 'ratio'] as const).map((k) => r[k].padEnd(width(k))).join(' | ');
console.log(line({ what: 'what', ours: 'ours', alternative: 'alternative', ratio: 'ratio' }));
console.log((['what', 'ours', 'alternative', 'ratio'] as const).map((k) => '-'.repeat(width(k))).join('-|-'));
for (const r of rows) console.log(line(r));
console.log('\nratio = ours / alternative (below 1 is faster or smaller). Medians; machine load varies between runs.');
