import { describeValue } from '../config/errors.js';
import { poolAnalysisLines } from './analysis.js';
import type { Effect } from './drift.js';
import type { EnvironmentReview, ObjectReview } from './compare.js';
import type { EnvironmentSimulation, ScenarioComparison, Side, SimulationReview } from './simulation.js';
import type { SimulationOutput } from '../simulate/contract.js';
import { hitsLimits, LIMITS_NOTE, planCost, usd } from '../simulate/render.js';

/** Markdown for a pull-request comment: a summary table per environment, then one section per object. */
export function renderMarkdown(reviews: readonly EnvironmentReview[], baseLabel: string, simulation: SimulationReview): string {
  const replacing = reviews.flatMap((r) => r.objects.filter(replaces).map((o) => `${r.environment}/${o.kind}/${o.name}`));
  const lines: string[] = [`## Karpenter review against ${baseLabel}`, ''];
  lines.push(
    replacing.length > 0
      ? `**${replacing.length} change${replacing.length === 1 ? '' : 's'} replace${replacing.length === 1 ? 's' : ''} nodes** (Karpenter v1.13 drift): ${replacing.map((r) => `\`${r}\``).join(', ')}.`
      : '**No change replaces nodes.**',
    '',
    simulationIntro(simulation),
    '',
  );
  for (const env of reviews) {
    lines.push(`### ${env.environment}${env.status === 'added' ? ' (new environment)' : env.status === 'deleted' ? ' (environment removed)' : ''}`, '');
    const launched = environmentSimulation(simulation.status === 'ran' ? simulation.environments.get(env.environment) : undefined);
    if (env.objects.length === 0) {
      lines.push('No change to its manifests.', '', ...launched);
      continue;
    }
    lines.push('| object | change | nodes |', '|---|---|---|');
    for (const o of env.objects) lines.push(`| ${o.kind} \`${o.name}\` | ${summary(o)} | ${effectText(o.effect, o.status)} |`);
    lines.push('');
    for (const o of env.objects.filter((x) => x.kind === 'NodePool' || x.kind === 'EC2NodeClass')) lines.push(...objectSection(o), '');
    for (const u of env.unfit) lines.push(`- **workload \`${u.workload}\` no longer fits any pool**: ${u.why}`);
    if (env.unfit.length > 0) lines.push('');
    if (!env.analysed && env.objects.some((o) => o.kind === 'NodePool')) lines.push('_Admitted types and cost ceilings: no analyzer ran._', '');
    lines.push(...launched);
  }
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

const replaces = (o: ObjectReview) => o.effect === 'replaces' || o.effect === 'replaces-some';

function effectText(effect: Effect, status: ObjectReview['status']): string {
  if (status === 'deleted' && effect === 'replaces') return '**all drain**';
  switch (effect) {
    case 'replaces':
      return '**all replaced**';
    case 'replaces-some':
      return '**some replaced**';
    case 'scales':
      return 'scaled';
    default:
      return 'not replaced';
  }
}

function summary(o: ObjectReview): string {
  if (o.status === 'added') return 'added';
  if (o.status === 'deleted') return 'deleted';
  if (o.status === 'renamed') return `renamed from \`${o.from}\``;
  const paths = o.changes.map((c) => `\`${c.path}\``);
  return paths.length > 4 ? `${paths.slice(0, 4).join(', ')} and ${paths.length - 4} more` : paths.join(', ');
}

function objectSection(o: ObjectReview): string[] {
  const out = [`#### ${o.kind} \`${o.name}\`: ${o.status}, ${effectText(o.effect, o.status).replace(/\*/g, '')}`];
  for (const c of o.changes) {
    const values = c.path === 'spec.template.spec.requirements' ? `\n  - before: ${(c.before as string[]).map((r) => `\`${r}\``).join(', ')}\n  - after: ${(c.after as string[]).map((r) => `\`${r}\``).join(', ')}` : `: \`${describeValue(c.before)}\` → \`${describeValue(c.after)}\``;
    const mark = c.effect === 'replaces' || c.effect === 'replaces-some' ? '**drift**: ' : '';
    out.push(`- \`${c.path}\`${values.startsWith('\n') ? '' : values}\n  ${mark}${c.why}${c.cite ? ` (${c.cite})` : ''}${values.startsWith('\n') ? values : ''}`);
  }
  for (const n of o.notes) out.push(`- ${n}`);
  if (o.analysis) for (const l of poolAnalysisLines(o.analysis.before, o.analysis.after)) out.push(`- ${l}`);
  return out;
}

/** Under the summary: what the simulation is, or that it did not run and why (never silent). */
function simulationIntro(sim: SimulationReview): string {
  switch (sim.status) {
    case 'skipped':
      return `_What Karpenter would launch: not simulated (skipped with ${sim.why})._`;
    case 'unavailable':
      return `**Simulation not run: ${sim.why}.** What Karpenter would launch is not shown; the review of drift below stands.`;
    default:
      return "_What Karpenter would launch: Karpenter v1.13's own scheduler (`Provisioner.Schedule`), run offline on each environment's objects before and after the change, each side with its own environment file's zones and DaemonSets (the base's read with git) and today's catalogue; the simulations of `reports/<env>.simulation.md`. An environment whose manifests, zones and DaemonSets do not change launches the same and is not simulated._";
  }
}

function environmentSimulation(sim: EnvironmentSimulation | undefined): string[] {
  if (sim === undefined) return [];
  const out = ['#### What Karpenter would launch', ''];
  if (sim.status === 'removed') return [...out, 'Nothing: the change removes this environment.', ''];
  if (sim.status === 'not-run') return [...out, `Not simulated: ${sim.why}.`, ''];
  for (const s of sim.scenarios) out.push(...scenarioLines(s), '');
  const limited = sim.scenarios.some((s) => [s.before, s.after].some((r) => ran(r) && hitsLimits(r.output)));
  if (limited) out.push(`Note: ${LIMITS_NOTE}.`, '');
  return out;
}

type Ran = Extract<Side, { status: 'ran' }>;
const ran = (s: Side): s is Ran => s.status === 'ran';

/** NodeClaims alike (pool, capacity types, options) counted together: "2 × `default` spot: 83 options from c7a.medium $0.0513". */
function nodeClaimsText(out: SimulationOutput): string {
  if (out.nodeClaims.length === 0) return '0';
  const groups = new Map<string, number>();
  for (const nc of out.nodeClaims) {
    const first = nc.instanceTypes[0]!;
    const key = `\`${nc.nodePool}\` ${nc.capacityTypes.join(' or ')}: ${nc.instanceTypes.length} option${nc.instanceTypes.length === 1 ? '' : 's'} from ${first.name} ${usd(first.minPrice)}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return `${out.nodeClaims.length}: ${[...groups].map(([k, n]) => (n > 1 ? `${n} × ${k}` : k)).join('; ')}`;
}

const costText = (out: SimulationOutput) => {
  const [lo, hi] = planCost(out);
  return `${usd(lo)} .. ${usd(hi)}`;
};

const pendingCount = (out: SimulationOutput) => out.pending.reduce((n, p) => n + p.count, 0);
const pendingText = (out: SimulationOutput) => (out.pending.length === 0 ? 'none' : String(pendingCount(out)));
const pendingList = (out: SimulationOutput) => out.pending.map((p) => `${p.workload} x${p.count}: ${p.reason}`);

function cellOf(side: Side, what: (out: SimulationOutput) => string): string {
  if (side.status === 'absent') return '(no environment)';
  if (side.status === 'failed') return 'not simulated';
  return what(side.output).replace(/\|/g, '\\|');
}

function scenarioLines(s: ScenarioComparison): string[] {
  const { before, after } = s;
  if (ran(before) && ran(after) && before.pods === after.pods && JSON.stringify(before.output) === JSON.stringify(after.output)) {
    const o = after.output;
    return [
      `**${s.title}** (pods: ${after.pods}): unchanged: ${nodeClaimsText(o).replace(/^(\d+)/, (n) => `${n} NodeClaim${n === '1' ? '' : 's'}`)}; ${costText(o)} per hour; pods pending: ${pendingText(o)}.`,
      ...(o.pending.length > 0 ? ['', ...pendingList(o).map((l) => `- pending before and after: ${l}`)] : []),
    ];
  }
  const pods = ran(before) && ran(after) && before.pods !== after.pods ? `pods before: ${before.pods}; after: ${after.pods}` : `pods: ${ran(after) ? after.pods : ran(before) ? before.pods : 'not simulated'}`;
  const lines = [
    `**${s.title}** (${pods}):`,
    '',
    '| | before | after |',
    '|---|---|---|',
    `| NodeClaims | ${cellOf(before, nodeClaimsText)} | ${cellOf(after, nodeClaimsText)} |`,
    `| $/hour | ${cellOf(before, costText)} | ${cellOf(after, costText)} |`,
    `| pods pending | ${cellOf(before, pendingText)} | ${cellOf(after, pendingText)} |`,
    '',
  ];
  const samePending = ran(before) && ran(after) && JSON.stringify(before.output.pending) === JSON.stringify(after.output.pending);
  if (samePending) lines.push(...pendingList(after.output).map((l) => `- pending before and after: ${l}`));
  else {
    if (ran(before)) lines.push(...pendingList(before.output).map((l) => `- pending before: ${l}`));
    if (ran(after)) lines.push(...pendingList(after.output).map((l) => `- pending after: ${l}`));
  }
  for (const side of ['before', 'after'] as const) {
    const r = s[side];
    if (r.status === 'failed') lines.push(`- ${side}: not simulated: ${r.why.split('\n').join('; ')}`);
    if (r.status === 'ran' && r.output.plans > 1) lines.push(`- ${side}: ${r.output.agreeing} of ${r.output.runs} runs of Schedule gave this plan; Karpenter's tie-breaks (Go map order) gave ${r.output.plans - 1} other plan(s)`);
  }
  return lines;
}
