import { goDuration } from './drift.js';

/**
 * How a NodePool's disruption budgets pace drift, in words. Karpenter takes, for the
 * `Drifted` reason, the minimum over the budgets that list it or list no reasons; a budget
 * with a schedule is active from each cron start for its duration, in UTC
 * (sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/nodepool.go `GetAllowedDisruptionsByReason`;
 * docs "NodePool Disruption Budgets"). Budgets do not pace expiration or pool deletion.
 */
export interface Budget {
  readonly nodes?: string;
  readonly schedule?: string;
  readonly duration?: string;
  readonly reasons?: readonly string[];
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export function describePacing(budgets: readonly Budget[] | undefined): string {
  // The CRD defaults an absent list to one budget of 10%.
  const all = budgets === undefined || budgets.length === 0 ? [{ nodes: '10%' }] : budgets;
  const drift = all.filter((b) => b.reasons === undefined || b.reasons.length === 0 || b.reasons.includes('Drifted'));
  if (drift.length === 0) return 'no budget applies to drift: drifted nodes are replaced without a limit';
  const always = drift.filter((b) => b.schedule === undefined);
  const windows = drift.filter((b) => b.schedule !== undefined);
  const parts: string[] = [];
  if (always.length === 0) parts.push('no limit outside the windows below');
  else parts.push(`${always.map((b) => nodesText(b.nodes ?? '10%')).join(' and ')} at a time${always.length > 1 ? ', whichever is fewer' : ''}`);
  for (const b of windows) {
    const n = b.nodes ?? '10%';
    const amount = n === '0' || n === '0%' ? 'none' : `at most ${nodesText(n)}`;
    parts.push(`${amount} ${windowText(b.schedule!, b.duration)}`);
  }
  return parts.join('; ');
}

function nodesText(nodes: string): string {
  if (nodes.endsWith('%')) return `${nodes} of the pool's nodes (rounded up)`;
  return nodes === '1' ? '1 node' : `${nodes} nodes`;
}

/** "Mon-Fri 09:00-17:00 UTC" for the common shape (fixed minute and hour); the cron text otherwise. */
export function windowText(schedule: string, duration: string | undefined): string {
  const ns = duration === undefined ? undefined : goDuration(duration);
  const fallback = `for ${duration ?? '?'} from each \`${schedule}\` (UTC)`;
  const parts = schedule.trim().split(/ +/);
  if (ns === undefined || parts.length !== 5) return fallback;
  const [min, hour, dom, month, dow] = parts as [string, string, string, string, string];
  if (!/^\d+$/.test(min) || !/^\d+$/.test(hour) || dom !== '*' || month !== '*') return fallback;
  const start = Number(hour) * 60 + Number(min);
  const end = start + ns / 60e9;
  const days = daysText(dow);
  if (days === undefined || !Number.isInteger(end)) return fallback;
  const clock = (m: number) => `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  const next = end >= 24 * 60 ? (end >= 48 * 60 ? ` (+${Math.floor(end / (24 * 60))} days)` : ' next day') : '';
  return `${days} ${clock(start)}-${clock(end)}${next} UTC`;
}

function daysText(dow: string): string | undefined {
  if (dow === '*' || dow === '?') return 'every day';
  const day = (t: string) => {
    const i = DAY_NAMES.indexOf(t.toLowerCase());
    if (i >= 0) return i;
    return /^[0-7]$/.test(t) ? Number(t) % 7 : undefined;
  };
  const items = dow.split(',').map((item) => {
    const [a, b, extra] = item.split('-');
    if (extra !== undefined) return undefined;
    const x = day(a!);
    const y = b === undefined ? undefined : day(b);
    if (x === undefined || (b !== undefined && y === undefined)) return undefined;
    return y === undefined ? DAYS[x] : `${DAYS[x]}-${DAYS[y]}`;
  });
  return items.some((i) => i === undefined) ? undefined : items.join(', ');
}
