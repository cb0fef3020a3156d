import type { AdmittedType, CeilingEnd, EnvironmentAnalysis, PoolAnalysis, WorkloadFit } from './analyze.js';
import { formatCpu, formatMemory } from './quantity.js';
import { memo } from './memo.js';

/**
 * `reports/<env>.md`: the analysis as Markdown a pull request shows as a plain diff.
 * Deterministic: no timestamps, every list sorted.
 */

const dollars = (n: number, digits = 2) => `$${n.toFixed(digits)}`;
const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replace(/\|/g, '\\|');

function shortList(values: readonly string[], n = 12): string {
  return values.length > n ? `${values.slice(0, n).join(', ')}, ... (${values.length - n} more)` : values.join(', ');
}

function typeShape(t: AdmittedType): string {
  return `${t.name} (${t.vcpu} vCPU, ${formatMemory(t.memory)}; allocatable ${formatCpu(t.allocatable.cpu)} CPU, ${formatMemory(t.allocatable.memory)}, ${t.allocatable.pods} pods)`;
}

/** Pools that share a selection share its admitted list (analyze.ts): its rows are computed once. */
const extremesOf = new WeakMap<object, Map<string, string[]>>();

function extremes(pool: PoolAnalysis): string[] {
  return memo(extremesOf, pool.admitted, '', () => computeExtremes(pool));
}

function computeExtremes(pool: PoolAnalysis): string[] {
  if (pool.admitted.length === 0) return [];
  const by = (f: (t: AdmittedType) => number) => [...pool.admitted].sort((a, b) => f(a) - f(b) || (a.name < b.name ? -1 : 1));
  const cpu = by((t) => t.allocatable.cpu);
  const mem = by((t) => t.allocatable.memory);
  return [
    `| allocatable CPU | ${formatCpu(cpu[0]!.allocatable.cpu)} (${cpu[0]!.name}) to ${formatCpu(cpu.at(-1)!.allocatable.cpu)} (${cpu.at(-1)!.name}) |`,
    `| allocatable memory | ${formatMemory(mem[0]!.allocatable.memory)} (${mem[0]!.name}) to ${formatMemory(mem.at(-1)!.allocatable.memory)} (${mem.at(-1)!.name}) |`,
    `| smallest type | ${typeShape(cpu[0]!)} |`,
  ];
}

function ceilingEnd(e: CeilingEnd): string {
  return `${dollars(e.perHour)}/h (${e.nodes} x ${e.type}, ${dollars(e.perVcpuHour, 4)} per vCPU-hour)`;
}

function ceilingRows(pool: PoolAnalysis, a: EnvironmentAnalysis): string[] {
  const c = pool.ceiling;
  if (c.limits === null) return ['| cost ceiling | none: the pool has no cpu or memory limits |'];
  const limits = Object.entries(c.limits)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const od = c.onDemand ? `${ceilingEnd(c.onDemand.low)} to ${ceilingEnd(c.onDemand.high)}` : 'no priced type fits in the limits';
  const spot = !pool.capacityTypes.includes('spot')
    ? 'not applicable (no Spot capacity)'
    : c.spot
      ? `${ceilingEnd(c.spot.low)} to ${ceilingEnd(c.spot.high)}`
      : `unknown: ${a.catalogue.file} has no Spot prices (refresh it with \`npm run catalogue\`)`;
  return [`| cost ceiling, On-Demand (limits ${limits}) | ${od} |`, `| cost ceiling, Spot | ${spot} |`];
}

function poolSection(pool: PoolAnalysis, a: EnvironmentAnalysis): string[] {
  return [
    `### NodePool ${code(pool.name)}`,
    '',
    '| | |',
    '|---|---|',
    `| node class | ${pool.nodeClass} (AMI family ${pool.amiFamily}) |`,
    `| weight | ${pool.weight} |`,
    `| requirements | ${pool.requirements.map((r) => code(cell(r))).join('<br>')} |`,
    ...(pool.taints.length > 0 ? [`| taints | ${pool.taints.map(code).join(', ')} |`] : []),
    `| capacity types | ${pool.capacityTypes.join(', ') || 'none'} |`,
    `| zones | ${pool.zones ? pool.zones.join(', ') : 'every zone (unknown)'} |`,
    `| admitted types | **${pool.admitted.length}** |`,
    `| families (${pool.families.length}) | ${shortList(pool.families, 40)} |`,
    `| generations | ${pool.generations.join(', ')} |`,
    `| architectures | ${pool.architectures.map((arch) => `${arch} (${pool.admitted.filter((t) => t.arch === arch).length})`).join(', ')} |`,
    `| sizes | ${pool.sizes.join(', ')} |`,
    ...extremes(pool),
    ...ceilingRows(pool, a),
    '',
  ];
}

function workloadRow(w: WorkloadFit): string {
  const req = `${formatCpu(w.requests.cpu)} CPU, ${formatMemory(w.requests.memory)}`;
  if (!w.fit) return `| ${w.workload} | ${w.replicas} | ${req} | ${w.pools.join(', ') || 'none'} | fits nowhere | | | | |`;
  const f = w.fit;
  const within =
    f.nodesWithinLimits === null ? 'no limits' : f.nodesWithinLimits >= f.nodes ? 'yes' : `no: ${f.nodesWithinLimits} nodes, ${Math.max(0, w.replicas - f.nodesWithinLimits * f.podsPerNode)} pods pending`;
  return `| ${w.workload} | ${w.replicas} | ${req} | ${f.pool} | ${f.type} | ${f.podsPerNode} | ${f.nodes} | ${f.onDemandPerHour === null ? 'unknown' : dollars(f.onDemandPerHour, 4)} | ${within} |`;
}

/** The Markdown report of one environment; `chartFile` is the SVG's name beside it. */
export function renderReport(a: EnvironmentAnalysis, chartFile = `${a.environment}.svg`): string {
  const ds = a.daemonSets;
  const findings =
    a.findings.length === 0
      ? ['None.']
      : ['| severity | where | finding |', '|---|---|---|', ...a.findings.map((f) => `| ${f.severity} | ${code(f.path)} | ${cell(f.message)} |`)];
  const lines = [
    `# Review: ${a.environment}`,
    '',
    `Generated by \`npm run synth\` (also \`npm run analyze -- --env ${a.environment}\`) from ${code(a.file)}, ${code(`dist/${a.environment}/`)} and ${code(a.catalogue.file)}; do not edit. Karpenter v1.13 semantics: a type is admitted when its labels meet every requirement of the pool, its node class's AMI family has an image for its architecture, and it is offered in the pool's zones and capacity types.`,
    '',
    `- **Prices**: On-Demand USD/hour in ${a.catalogue.region}, as of ${a.catalogue.pricesAsOf} (${a.catalogue.file}, ${a.catalogue.types} types). ${a.pools.some((p) => p.ceiling.spot) ? 'Spot: the lowest zone price of the catalogue.' : 'Spot: the catalogue has none, so Spot pools are priced at On-Demand rates here (an upper bound).'}`,
    `- **Zones**: ${a.zones.list ? `${a.zones.list.join(', ')} (${a.zones.source})` : a.zones.source}.`,
    `- **Per-node overhead** (daemonSets, ${ds.source}): ${ds.names.join(', ')}: ${formatCpu(ds.cpu)} CPU, ${formatMemory(ds.memory)}, ${ds.pods} pods, reserved before any workload fits.`,
    `- **Memory floor** (review.memoryFloor): ${formatMemory(a.memoryFloor)}.`,
    `- **What Karpenter would launch**: [${a.environment}.simulation.md](${a.environment}.simulation.md), Karpenter's own scheduler run offline on the same \`dist/${a.environment}/\` (written by \`npm run simulate -- --write\`, which needs Go; this report is an estimate by instance type).`,
    '',
    '## Findings',
    '',
    ...findings,
    '',
    '## NodePools',
    '',
    ...a.pools.flatMap((p) => poolSection(p, a)),
    '## Workloads',
    '',
    'Where the pods go: the highest-weight NodePool that accepts the pod and has a type for one pod plus the DaemonSets, and its admitted type that holds all replicas most cheaply within the pool\'s limits (one type for every node, On-Demand prices; pods of one workload only, so an estimate). `inflate` is shown at 1, 10 and 100 replicas.',
    '',
    '| workload | replicas | requests per pod | pool | type | pods per node | nodes | On-Demand per hour | within limits |',
    '|---|---|---|---|---|---|---|---|---|',
    ...a.workloads.map(workloadRow),
    '',
    '## Admitted types: vCPU against On-Demand $/hour',
    '',
    `![Admitted instance types of ${a.environment}: vCPU against On-Demand dollars per hour, by architecture](${chartFile})`,
    '',
  ];
  return lines.join('\n');
}
