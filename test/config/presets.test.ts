import { describe, expect, it } from 'vitest';
import { PRESETS, type PresetName } from '../../config/presets.js';
import { analyzeDoc, expected, label, num, RAW } from '../analyze/support.js';

/**
 * Issue 15: every preset admits no Xen-era type, no nano/micro/small size, nothing below
 * 2 GiB, and stays diverse enough for Spot. The admitted set is computed here from the raw
 * catalogue with a hand-written filter per preset (not the analyzer's requirement algebra),
 * then compared with what the analyzer admits for a pool using the preset.
 */
const category = (l: Record<string, string>) => label(l, 'instance-category')!;
const HAND_FILTERS: Record<PresetName, (l: Record<string, string>) => boolean> = {
  'spot-with-on-demand-fallback': (l) => l['kubernetes.io/arch'] === 'amd64' && ['c', 'm', 'r'].includes(category(l)) && num(l, 'instance-generation') >= 6,
  'spot-multi-arch': (l) => ['c5', 'c6g', 'm5', 'm6g', 'r5', 'r6g'].includes(label(l, 'instance-family')!) && !['nano', 'micro', 'small'].includes(label(l, 'instance-size')!),
  'spot-small': (l) =>
    ['c', 'm', 't'].includes(category(l)) && num(l, 'instance-cpu') <= 4 && label(l, 'instance-hypervisor') !== 'xen' && !['nano', 'micro', 'small'].includes(label(l, 'instance-size')!),
};

/** Types and families each preset's comment in config/presets.ts states. */
const STATED: Record<PresetName, { types: number; families: number }> = {
  'spot-with-on-demand-fallback': { types: 406, families: 38 },
  'spot-multi-arch': { types: 54, families: 6 },
  'spot-small': { types: 144, families: 59 },
};

describe.each(Object.keys(PRESETS) as PresetName[])('preset %s', (preset) => {
  const admitted = expected(HAND_FILTERS[preset]);
  const families = new Set(admitted.map((n) => label(RAW[n]!.labels, 'instance-family')));

  it('admits no Xen-era (previous-generation) type and no nano, micro or small size, nothing below 2 GiB', () => {
    expect(admitted.filter((n) => label(RAW[n]!.labels, 'instance-hypervisor') === 'xen')).toEqual([]);
    expect(admitted.filter((n) => ['nano', 'micro', 'small'].includes(label(RAW[n]!.labels, 'instance-size')!))).toEqual([]);
    expect(admitted.filter((n) => num(RAW[n]!.labels, 'instance-memory') < 2048)).toEqual([]);
    for (const old of ['t1.micro', 'm1.small', 'm2.2xlarge', 'c1.medium', 'c3.large', 'm3.medium', 't2.nano', 't3.nano', 't3a.micro']) expect(admitted).not.toContain(old);
  });

  it('stays diverse enough for Spot: at least 10 types in at least 3 families, as its comment says', () => {
    expect(admitted.length).toBeGreaterThanOrEqual(10);
    expect(families.size).toBeGreaterThanOrEqual(3);
    expect({ types: admitted.length, families: families.size }).toEqual(STATED[preset]);
  });

  it('is what the analyzer admits for a pool using it, with no warning or error', () => {
    const { analysis } = analyzeDoc({ nodePools: [{ name: 'p', preset }] });
    expect(analysis.pools[0]!.admitted.map((t) => t.name)).toEqual(admitted);
    expect(analysis.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
