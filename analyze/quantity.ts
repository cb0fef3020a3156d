/**
 * Kubernetes resource quantities as numbers: CPU in cores, memory in bytes. Only the
 * analyzer needs arithmetic on them; exact decimal behaviour beyond a double is not needed
 * to compare a pod's requests with a node's allocatable.
 */
const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** "1930m" -> 1.93, "6903Mi" -> 7238320128, "1e3" -> 1000. Throws on anything else (schemas validated it). */
export function parseQuantity(text: string): number {
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(text.trim());
  if (!m) throw new Error(`must be a Kubernetes quantity such as 500m, 2 or 4Gi, got "${text}"`);
  const base = Number(m[1]);
  return m[2] ? base * 10 ** Number(m[2].slice(1)) : base * SUFFIX[m[3] ?? '']!;
}

export const GiB = 2 ** 30;
export const MiB = 2 ** 20;

/** 7.93 -> "7.93", 0.125 -> "0.125": CPU for tables. */
export const formatCpu = (cores: number): string => String(Math.round(cores * 1000) / 1000);

/** Bytes -> "13.8 GiB" (one decimal below 100 GiB). */
export function formatMemory(bytes: number): string {
  const gib = bytes / GiB;
  if (gib >= 100) return `${Math.round(gib)} GiB`;
  if (gib >= 1) return `${Math.round(gib * 10) / 10} GiB`;
  return `${Math.round(bytes / MiB)} MiB`;
}
