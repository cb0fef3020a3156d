import type { Prepared } from './inputs.js';
import type { PlannedNodeClaim, SimulationOutput } from './contract.js';
import { describeDaemonSets } from './daemonsets.js';

/** Options shown by name per NodeClaim; the rest are counted. */
const SHOWN_OPTIONS = 5;

export const usd = (n: number) => `$${n.toFixed(4)}`;

/** Cheapest option's cheapest offering .. most expensive option's dearest offering. */
export function costRange(nc: PlannedNodeClaim): readonly [number, number] {
  return [Math.min(...nc.instanceTypes.map((o) => o.minPrice)), Math.max(...nc.instanceTypes.map((o) => o.maxPrice))];
}

export function planCost(out: SimulationOutput): readonly [number, number] {
  return out.nodeClaims.reduce<[number, number]>(
    (acc, nc) => {
      const [lo, hi] = costRange(nc);
      return [acc[0] + lo, acc[1] + hi];
    },
    [0, 0],
  );
}

const podList = (nc: PlannedNodeClaim) => nc.pods.map((p) => `${p.workload} x${p.count}`).join(', ');
const requestList = (nc: PlannedNodeClaim) =>
  Object.entries(nc.requests)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
const optionList = (nc: PlannedNodeClaim) => {
  const shown = nc.instanceTypes.slice(0, SHOWN_OPTIONS).map((o) => `${o.name} ${usd(o.minPrice)}`);
  const rest = nc.instanceTypes.length - shown.length;
  return `${shown.join(', ')}${rest > 0 ? ` (+${rest} more)` : ''}`;
};

/** What the pods were: "checkout/checkout-api x3, default/inflate x0". */
export function describePods(p: Prepared): string {
  const counts = new Map<string, number>();
  for (const pod of p.input.pods as { metadata: { name: string; namespace: string } }[]) {
    const w = `${pod.metadata.namespace}/${pod.metadata.name.replace(/-\d+$/, '')}`;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return counts.size === 0 ? 'no pods' : [...counts].map(([w, n]) => `${w} x${n}`).join(', ');
}

/** The lines that say what the simulation read and assumed. */
export function assumptions(p: Prepared): string[] {
  const spotKnown = Object.values(p.catalogue.instanceTypes).some((t) => t.spotPrices !== undefined);
  return [
    `inputs: dist/${p.env.name}/ (${p.input.nodePools.length} NodePool(s), ${p.input.nodeClasses.length} EC2NodeClass(es)), catalogue/${p.catalogue.region}.json (prices of ${p.catalogue.pricesAsOf})`,
    `zones: ${p.input.zones.join(', ')} (${p.zonesSource})`,
    `DaemonSets on every node (${p.daemonSetsSource}): ${describeDaemonSets(p.daemonSets)}`,
    spotKnown
      ? 'Spot: priced per zone from the catalogue'
      : 'Spot: the catalogue has no Spot prices, so a Spot offering costs its On-Demand price (what Karpenter does until its first Spot price update); Spot costs shown are On-Demand upper bounds',
  ];
}

/** Karpenter's limits check inside one round is pessimistic; say so wherever it shows. */
export const LIMITS_NOTE =
  'this is one provisioning round: Karpenter charges each NodeClaim it plans its largest option against the NodePool limits, so pods can stay pending here that the next round (counting the nodes actually launched) schedules';

export const hitsLimits = (out: SimulationOutput) => out.pending.some((p) => /exceed limits|limits have been exhausted/.test(p.reason));

function runsLine(out: SimulationOutput): string {
  const renamed = [out.zonesRelabelled && 'zones', out.capacityTypesRelabelled && 'spot and on-demand (priced alike, allowed alike)'].filter(Boolean);
  const zones = renamed.length > 0 ? `; ${renamed.join(' and ')} are interchangeable here and named canonically` : '';
  return out.plans === 1
    ? `all ${out.runs} runs of Schedule gave this plan${zones}`
    : `${out.agreeing} of ${out.runs} runs of Schedule gave this plan; Karpenter's tie-breaks (Go map order) gave ${out.plans - 1} other plan(s)${zones}`;
}

/** Plain text for the terminal. */
export function renderText(p: Prepared, out: SimulationOutput): string {
  const [lo, hi] = planCost(out);
  const lines = [
    `What Karpenter v1.13 would launch in ${p.env.name} for ${describePods(p)} (its own Provisioner.Schedule, offline)`,
    ...assumptions(p).map((l) => `  ${l}`),
    '',
    `${out.nodeClaims.length} NodeClaim(s), ${usd(lo)} .. ${usd(hi)} per hour`,
  ];
  out.nodeClaims.forEach((nc, i) => {
    const [a, b] = costRange(nc);
    lines.push(
      `  ${i + 1}. NodePool ${nc.nodePool}, zone ${nc.zones.join(' or ')}, ${nc.capacityTypes.join(' or ')}, ${usd(a)} .. ${usd(b)} per hour`,
      `     pods: ${podList(nc)} (requests with DaemonSets: ${requestList(nc)})`,
      `     ${nc.instanceTypes.length} instance-type option(s), cheapest first: ${optionList(nc)}`,
    );
  });
  lines.push(out.pending.length === 0 ? 'Pending: none' : 'Pending:');
  for (const pe of out.pending) lines.push(`  ${pe.workload} x${pe.count}: ${pe.reason}`);
  if (hitsLimits(out)) lines.push(`  (${LIMITS_NOTE})`);
  lines.push(`(${runsLine(out)})`);
  return `${lines.join('\n')}\n`;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** One report section in Markdown. */
export function renderMarkdownSection(title: string, p: Prepared, out: SimulationOutput): string {
  const [lo, hi] = planCost(out);
  const lines = [`## ${title}`, '', `Pods: ${describePods(p)}.`, '', `**${out.nodeClaims.length} NodeClaim(s), ${usd(lo)} .. ${usd(hi)} per hour.**`, ''];
  if (out.nodeClaims.length > 0) {
    lines.push('| # | NodePool | Zone | Capacity | Pods | Requests (with DaemonSets) | Options, cheapest first | $/hour |', '|---|---|---|---|---|---|---|---|');
    out.nodeClaims.forEach((nc, i) => {
      const [a, b] = costRange(nc);
      lines.push(
        `| ${i + 1} | ${nc.nodePool} | ${nc.zones.join(' or ')} | ${nc.capacityTypes.join(', ')} | ${cell(podList(nc))} | ${requestList(nc)} | ${nc.instanceTypes.length}: ${optionList(nc)} | ${usd(a)} .. ${usd(b)} |`,
      );
    });
    lines.push('');
  }
  if (out.pending.length === 0) lines.push('Pending pods: none.');
  else {
    lines.push('Pending pods, with Karpenter\'s reason:', '');
    for (const pe of out.pending) lines.push(`- ${pe.workload} x${pe.count}: ${cell(pe.reason)}`);
    if (hitsLimits(out)) lines.push('', `Note: ${LIMITS_NOTE}.`);
  }
  lines.push('', `(${runsLine(out)}.)`, '');
  return lines.join('\n');
}

/** The whole reports/<env>.simulation.md. */
export function renderReport(env: string, sections: readonly { title: string; prepared: Prepared; output: SimulationOutput }[]): string {
  const first = sections[0]!.prepared;
  return [
    `# ${env}: what Karpenter would launch`,
    '',
    `Written by \`npm run simulate -- --write\`: Karpenter v1.13's own scheduler (\`Provisioner.Schedule\`) run offline on \`dist/${env}/\`; do not edit. It does not model EC2 Fleet's final pick among the options, capacity shortages, existing nodes or consolidation.`,
    '',
    ...assumptions(first).map((l) => `- ${l}`),
    '',
    ...sections.map((s) => renderMarkdownSection(s.title, s.prepared, s.output)),
  ].join('\n');
}
