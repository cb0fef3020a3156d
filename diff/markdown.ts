import { describeValue } from '../config/errors.js';
import { poolAnalysisLines } from './analysis.js';
import type { Effect } from './drift.js';
import type { EnvironmentReview, ObjectReview } from './compare.js';

/** Markdown for a pull-request comment: a summary table per environment, then one section per object. */
export function renderMarkdown(reviews: readonly EnvironmentReview[], baseLabel: string): string {
  const replacing = reviews.flatMap((r) => r.objects.filter(replaces).map((o) => `${r.environment}/${o.kind}/${o.name}`));
  const lines: string[] = [`## Karpenter review against ${baseLabel}`, ''];
  lines.push(
    replacing.length > 0
      ? `**${replacing.length} change${replacing.length === 1 ? '' : 's'} replace${replacing.length === 1 ? 's' : ''} nodes** (Karpenter v1.13 drift): ${replacing.map((r) => `\`${r}\``).join(', ')}.`
      : '**No change replaces nodes.**',
    '',
  );
  for (const env of reviews) {
    lines.push(`### ${env.environment}${env.status === 'added' ? ' (new environment)' : env.status === 'deleted' ? ' (environment removed)' : ''}`, '');
    if (env.objects.length === 0) {
      lines.push('No change to its manifests.', '');
      continue;
    }
    lines.push('| object | change | nodes |', '|---|---|---|');
    for (const o of env.objects) lines.push(`| ${o.kind} \`${o.name}\` | ${summary(o)} | ${effectText(o.effect, o.status)} |`);
    lines.push('');
    for (const o of env.objects.filter((x) => x.kind === 'NodePool' || x.kind === 'EC2NodeClass')) lines.push(...objectSection(o), '');
    for (const u of env.unfit) lines.push(`- **workload \`${u.workload}\` no longer fits any pool**: ${u.why}`);
    if (env.unfit.length > 0) lines.push('');
    if (!env.analysed && env.objects.some((o) => o.kind === 'NodePool')) lines.push('_Admitted types and cost ceilings: no analyzer ran._', '');
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
