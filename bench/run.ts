/**
 * `npm run bench [-- --quick]`: how fast `npm run synth` is next to the floor (a Node
 * process that only loads cdk8s and cdk8s-plus-30) and next to `cdk8s synth`, whole
 * processes, medians of N runs, as ratios measured in the same run (absolute times move
 * with the machine's load; ratios much less). Then the scaling curve, each command's
 * `--help` and bad-argument refusal, the unit tests' wall time and the top of a CPU
 * profile of the 1,000-NodePool case. Prints Markdown and writes bench/results.md.
 * Nothing here asserts a target: it reports them.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { largeRepo } from './large-repo.js';
import { topOfProfile } from './profile.js';
import { repeat, ratio, seconds, table, type Command, type Stats } from './measure.js';
import { benchValidate } from './validate.js';
import { analyzeEnvironment } from '../analyze/analyze.js';
import { readCatalogue } from '../catalogue/catalogue.js';
import { synthesize } from '../charts/synth.js';
import { benchSimulate } from './simulate.js';

const ROOT = join(import.meta.dirname, '..');
const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } }, strict: true });
const quick = flags.quick!;
/** Runs per row: fast rows, rows that take seconds (ts-node), scaling cases. */
const RUNS = quick ? { fast: 3, slow: 1, scale: 1 } : { fast: 7, slow: 3, scale: 3 };
const SCALING: ReadonlyArray<readonly [envs: number, pools: number]> = [[1, 10], [1, 100], [1, 1000], [1, 10000], [300, 10]];

const out: string[] = [];
const say = (text = '') => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};

const node = (args: readonly string[], cwd = ROOT): Command => ({ cmd: process.execPath, args, cwd });
const npm = (args: readonly string[]): Command => ({ cmd: 'npm', args, cwd: ROOT });
const cdk8s = (app: string, outdir: string): Command => ({ cmd: join(ROOT, 'node_modules/.bin/cdk8s'), args: ['synth', '--app', app, '--output', outdir], cwd: ROOT });

/** A scratch copy of the inputs, so no row writes into this checkout. */
function inputsCopy(): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-inputs-'));
  for (const rel of ['environments', 'infra/outputs', 'crds', 'catalogue', 'gitops.yaml']) cpSync(join(ROOT, rel), join(root, rel), { recursive: true });
  return root;
}

/** The bundle the launcher runs for charts/main.ts in this checkout (the cache is shared by every checkout that links node_modules). */
function synthBundle(): string {
  const where = execFileSync(process.execPath, [join(ROOT, 'scripts/run.mjs'), join(ROOT, 'charts/main.ts')], { encoding: 'utf8', env: { ...process.env, KARPENTER_GITOPS_RUN_WHERE: '1' } }).trim();
  if (!where.endsWith('main.js')) throw new Error(`scripts/run.mjs gave no bundle for charts/main.ts: ${where}`);
  return where;
}

function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, Node ${process.version}`;
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const commandLine = `npm run bench${quick ? ' -- --quick' : ''}`;

say(`# npm run bench${quick ? ' (--quick)' : ''}`);
say();
say(`Command: \`${commandLine}\`. Machine: ${machine()}. Load average at start: ${load()}.`);
say(`Medians of ${RUNS.fast} runs (${RUNS.slow} for the cdk8s rows, ${RUNS.scale} per scaling case), each after one unmeasured warm-up run. CPU is user + system time of the whole process tree.`);
say();

// ---------------------------------------------------------------- the table of the issue
const inputs = inputsCopy();
/** A package whose only script runs `node -e 0`: what `npm run` costs before any script of ours starts. */
const npmFloor = mkdtempSync(join(tmpdir(), 'bench-npm-'));
writeFileSync(join(npmFloor, 'package.json'), `${JSON.stringify({ name: 'bench-npm-floor', private: true, scripts: { noop: 'node -e 0' } })}\n`);
try {
  const cdk8sApp = /^app:\s*(.+)$/m.exec(readFileSync(join(ROOT, 'cdk8s.yaml'), 'utf8'))![1]!.trim();
  const rows: Array<{ what: string; stats: Stats }> = [];
  const row = (what: string, c: Command, runs: number, expect = 0) => {
    process.stderr.write(`bench: ${what}\n`);
    const stats = repeat(c, runs, { expect });
    rows.push({ what, stats });
    return stats;
  };
  const root = ['--root', inputs];
  const floor = row('floor: `node` importing only cdk8s and cdk8s-plus-30', node(['--input-type=module', '-e', "import 'cdk8s'; import 'cdk8s-plus-30';"]), RUNS.fast);
  const synth = row('`npm run synth` (whole process: npm, launcher, bundle)', npm(['run', 'synth', '--', ...root]), RUNS.fast);
  const npmAlone = row("`npm run` of a script that runs `node -e 0` (npm's own start-up)", { cmd: 'npm', args: ['run', '--silent', 'noop'], cwd: npmFloor }, RUNS.fast);
  const launcher = row('`node scripts/run.mjs charts/main.ts` (the launcher, no npm)', node(['scripts/run.mjs', 'charts/main.ts', ...root]), RUNS.fast);
  row('compiled: `node <cached bundle>/main.js`', node([synthBundle(), ...root]), RUNS.fast);
  const loading = row('compiled, `--help`: loading the bundle, no synth', node([synthBundle(), '--help']), RUNS.fast);
  row('`node --import tsx charts/main.ts` (what `npm run synth` ran before)', node(['--import', 'tsx', 'charts/main.ts', ...root]), RUNS.fast);
  const tsNode = row(
    '`cdk8s synth`, app run by ts-node as `cdk8s init` sets it up (ESM form: `node --loader ts-node/esm`, type-checking)',
    cdk8s(`node --loader ts-node/esm charts/main.ts --root ${inputs}`, join(inputs, '.cdk8s.out')),
    RUNS.slow,
  );
  row(`\`cdk8s synth\` with our cdk8s.yaml (\`${cdk8sApp}\`)`, cdk8s(`${cdk8sApp} --root ${inputs}`, join(inputs, '.cdk8s.out')), RUNS.slow);

  say('## Shipped environments, whole process');
  say();
  say(
    table(
      ['command', 'wall', 'cpu', 'wall vs floor', 'cpu vs floor'],
      rows.map(({ what, stats }) => [what, seconds(stats.wallMs), seconds(stats.cpuMs), ratio(stats.wallMs, floor.wallMs), ratio(stats.cpuMs, floor.cpuMs)]),
    ),
  );
  say();
  say('Targets (reported, not asserted):');
  say(`- \`npm run synth\` within 2x of the floor: ${ratio(synth.wallMs, floor.wallMs)} wall, ${ratio(synth.cpuMs, floor.cpuMs)} CPU.`);
  say(
    `  npm's own start-up is ${ratio(npmAlone.wallMs, floor.wallMs)} of the floor (wall; ${ratio(npmAlone.cpuMs, floor.cpuMs)} CPU), which leaves the launcher and the whole synth ${(2 - npmAlone.wallMs / floor.wallMs).toFixed(1)}x of it; they take ${ratio(launcher.wallMs, floor.wallMs)}, of which loading the bundle is ${ratio(loading.wallMs, floor.wallMs)}.`,
  );
  say(`- at least 10x faster than \`cdk8s synth\` with ts-node: ${ratio(tsNode.wallMs, synth.wallMs)} (wall), ${ratio(tsNode.cpuMs, synth.cpuMs)} (CPU).`);
  say();

  // ------------------------------------------------------------ --help and refusals
  // Every package.json script that runs through the launcher is a command of ours.
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const commands = Object.entries(scripts).filter(([name, line]) => line.includes('scripts/run.mjs') && name !== 'bench').map(([name]) => name);
  const answers: string[][] = [];
  for (const name of commands) {
    for (const args of [['--help'], ['--no-such-option']]) {
      process.stderr.write(`bench: npm run ${name} -- ${args.join(' ')}\n`);
      // --root keeps a command that ignores the argument from writing into this checkout.
      const stats = repeat(npm(['run', name, '--', ...args, ...(name === 'synth' ? root : [])]), RUNS.fast, { expect: 'any' });
      // npm prints its `> script` banner on stdout: the command's first line is the first other line of either stream.
      const said = `${stats.last.stdout}\n${stats.last.stderr}`.split('\n').find((l) => !l.startsWith('>') && l.trim() !== '') ?? '';
      answers.push([`\`npm run ${name} -- ${args.join(' ')}\``, String(stats.last.code), seconds(stats.wallMs), seconds(stats.cpuMs), ratio(stats.wallMs, floor.wallMs), said.slice(0, 70)]);
    }
  }
  say('## `--help` and refusals (target: under 2x the floor)');
  say();
  say(table(['command', 'exit', 'wall', 'cpu', 'wall vs floor', 'first line'], answers));
  say();
} finally {
  rmSync(inputs, { recursive: true, force: true });
  rmSync(npmFloor, { recursive: true, force: true });
}

// ---------------------------------------------------------------- scaling
say('## Scaling: `node scripts/run.mjs charts/main.ts --root <generated repo>`');
say();
say('Each environment: one node class, N NodePools (the three presets in turn), the inflate Deployment and PDB; gitops.yaml gives each environment one cluster (3 Applications). Measured with dist/ already there, as in CI. Objects = files written to dist/ and argocd/ (the 4 vendored CRDs not counted).');
say();
const scaling: string[][] = [];
let profiled: ReturnType<typeof topOfProfile> | undefined;
for (const [envs, pools] of SCALING) {
  const repo = largeRepo(envs, pools);
  try {
    process.stderr.write(`bench: scaling ${envs} x ${pools}\n`);
    const c = node(['scripts/run.mjs', 'charts/main.ts', '--root', repo.root]);
    const stats = repeat(c, RUNS.scale, { rss: true });
    const count = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? (e.name === 'karpenter-crds' ? 0 : count(join(dir, e.name))) : 1), 0);
    const objects = count(join(repo.root, 'dist')) + count(join(repo.root, 'argocd'));
    const what = envs === 1 ? `1 environment x ${pools.toLocaleString('en-US')} NodePools` : `${envs} environments x ${pools} NodePools, with Argo CD objects`;
    scaling.push([what, objects.toLocaleString('en-US'), seconds(stats.wallMs), seconds(stats.cpuMs), `${stats.peakRssMiB.toFixed(0)} MiB`, `${(stats.wallMs / objects).toFixed(2)} ms`, `${(stats.cpuMs / objects).toFixed(2)} ms`]);
    if (envs === 1 && pools === 1000) {
      const dir = mkdtempSync(join(tmpdir(), 'bench-prof-'));
      try {
        execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, 'scripts/run.mjs', 'charts/main.ts', '--root', repo.root], { cwd: ROOT, stdio: 'ignore' });
        profiled = topOfProfile(dir, 12);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    repo.dispose();
  }
}
say(table(['case', 'objects', 'wall', 'cpu', 'peak RSS', 'wall per object', 'cpu per object'], scaling));
say();
say('Targets: 300 x 10 under 3 s and 300 MB; 10,000 NodePools under 10 s and 500 MB; cost per object flat from 10 to 10,000.');
say();

// ---------------------------------------------------------------- profile
if (profiled) {
  say(`## CPU profile, 1 environment x 1,000 NodePools (\`node --cpu-prof\`, ${seconds(profiled.total)} sampled)`);
  say();
  say('Self time by owner (package, our source file, Node\'s module loader, GC):');
  say();
  say(table(['owner', 'self', 'share'], profiled.owners.map((l) => [l.what, `${l.ms.toFixed(0)} ms`, `${(l.share * 100).toFixed(1)}%`])));
  say();
  say('Top functions by self time:');
  say();
  say(table(['function', 'self', 'share'], profiled.functions.map((l) => [l.what, `${l.ms.toFixed(0)} ms`, `${(l.share * 100).toFixed(1)}%`])));
  say();
}

/**
 * The analyzer's cost per NodePool over the full catalogue (issue 10 asks for well under
 * 50 ms), and what reading and checking the catalogue costs against JSON.parse alone.
 */
function analyzerRows(): Array<{ what: string; ours: string; alternative: string; ratio: string }> {
  const envs = synthesize({ root: ROOT }).environments;
  const catalogue = readCatalogue(ROOT, 'us-east-1');
  const pools = envs.reduce((n, e) => n + e.environment.config.nodePools.length, 0);
  const time = (runs: number, f: () => void) => {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      f();
      ms.push(performance.now() - t);
    }
    return ms.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
  };
  const all = time(20, () => {
    for (const e of envs) analyzeEnvironment(e.environment, e.objects, catalogue);
  });
  const read = time(10, () => readCatalogue(ROOT, 'us-east-1'));
  const parse = time(10, () => JSON.parse(readFileSync(join(ROOT, 'catalogue/us-east-1.json'), 'utf8')));
  const types = Object.keys(catalogue.instanceTypes).length.toLocaleString('en-US');
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  return [
    { what: `analyzer per NodePool, full catalogue (${types} types), shipped pools`, ours: `${ms(all / pools)}/pool`, alternative: '50 ms/pool (issue 10 target)', ratio: `${(all / pools / 50).toFixed(2)}x` },
    { what: 'catalogue read + zod contract check', ours: ms(read), alternative: `${ms(parse)} (JSON.parse only)`, ratio: `${(read / parse).toFixed(2)}x` },
  ];
}

// ---------------------------------------------------------------- validator, analyzer, unit tests
if (!quick) {
  process.stderr.write('bench: validator\n');
  const rows = [...benchValidate().rows, ...analyzerRows(), ...benchSimulate().rows];
  say('## Validator, analyzer and simulation');
  say();
  say(table(['what', 'ours', 'alternative', 'ratio'], rows.map((r) => [r.what, r.ours, r.alternative, r.ratio])));
  say();
  process.stderr.write('bench: unit tests\n');
  const unit = repeat({ cmd: process.execPath, args: [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'unit'], cwd: ROOT }, 1, { warmup: 0, expect: 'any' });
  const summary = /vitest: .*/.exec(unit.last.stdout)?.[0] ?? `exit ${unit.last.code}`;
  say(`## Unit tests\n\n\`npx vitest run --project unit\`: ${seconds(unit.wallMs)} wall, ${seconds(unit.cpuMs)} CPU (${summary}). Target: under a minute.`);
  say();
} else {
  say('Validator rows and the unit tests\' wall time: run without `--quick`.');
  say();
}
say(`Load average at the end: ${load()}.`);
writeFileSync(flags.out ?? join(ROOT, 'bench', 'results.md'), `${out.join('\n')}\n`);
