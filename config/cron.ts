/**
 * Validates a cron schedule the way Karpenter does: sigs.k8s.io/karpenter@v1.13.0
 * pkg/apis/v1/nodepool.go Budget.IsActive calls cron.ParseStandard, robfig/cron's standard
 * parser (five fields, names for months and weekdays, `*`, `?`, ranges, steps, lists, and the
 * @yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly descriptors).
 * Returns undefined when valid, else what is wrong.
 */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'], base: 1 },
  { name: 'day of week', min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], base: 0 },
] as const;

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

export function cronProblem(schedule: string): string | undefined {
  // The CRD's pattern is matched by Go's RE2, whose \s is ASCII only: a non-breaking space
  // pasted from a web page passes JavaScript's \s and robfig/cron, then fails in the cluster.
  const odd = [...schedule].find((ch) => !/^[\x20-\x7e]$/.test(ch));
  if (odd !== undefined) return `contains ${JSON.stringify(odd)} (U+${odd.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}); use plain spaces`;
  const text = schedule.trim();
  if (text.startsWith('@')) return DESCRIPTORS.has(text) ? undefined : `unknown descriptor "${text}"`;
  const parts = text.split(/ +/);
  if (parts.length !== 5) return `has ${parts.length} fields, needs 5 (minute hour day-of-month month day-of-week)`;
  for (let i = 0; i < 5; i++) {
    const problem = fieldProblem(parts[i]!, FIELDS[i]!);
    if (problem) return `${FIELDS[i]!.name} field "${parts[i]}": ${problem}`;
  }
  return undefined;
}

type Field = (typeof FIELDS)[number];

function fieldProblem(field: string, spec: Field): string | undefined {
  for (const item of field.split(',')) {
    const [range, step, extra] = item.split('/');
    if (extra !== undefined) return 'more than one "/"';
    if (step !== undefined && !/^[0-9]+$/.test(step)) return `step "${step}" is not a whole number`;
    if (step !== undefined && Number(step) === 0) return 'step must be at least 1';
    if (range === '*' || range === '?') continue;
    const bounds = range!.split('-');
    if (bounds.length > 2) return `"${range}" is not a value or a range`;
    const values: number[] = [];
    for (const b of bounds) {
      const v = valueOf(b, spec);
      if (v === undefined) return `"${b}" is not a valid ${spec.name} (${spec.min}-${spec.max}${'names' in spec ? ` or ${spec.names[0]}-${spec.names[spec.names.length - 1]}` : ''})`;
      values.push(v);
    }
    if (values.length === 2 && values[0]! > values[1]!) return `range "${range}" goes backwards`;
  }
  return undefined;
}

function valueOf(text: string, spec: Field): number | undefined {
  if ('names' in spec) {
    const idx = (spec.names as readonly string[]).indexOf(text.toLowerCase());
    if (idx >= 0) return idx + spec.base;
  }
  if (!/^[0-9]+$/.test(text)) return undefined;
  const n = Number(text);
  return n >= spec.min && n <= spec.max ? n : undefined;
}
