import { describe, expect, it } from 'vitest';
import { NAMED_LIST_MAX, summaryLine, type SynthSummary } from '../../charts/summary.js';

const base: Omit<SynthSummary, 'environments'> = { distDir: 'dist', argocdDir: 'argocd', argocd: { objects: 12, crds: 4 }, ms: 247 };

describe('summaryLine', () => {
  it('names each environment with its object count while the list is short (the README example)', () => {
    const line = summaryLine({ ...base, environments: [{ name: 'dev', objects: 4 }, { name: 'prod', objects: 8 }, { name: 'staging', objects: 9 }] });
    expect(line).toBe('synthesized dev (4 objects), prod (8 objects), staging (9 objects) into dist/ and 12 Argo CD objects and 4 CRDs into argocd/ in 247 ms');
  });

  it('says argocd/ was left as is when --env limited the run', () => {
    const line = summaryLine({ distDir: 'out', argocdDir: 'argocd', ms: 12, environments: [{ name: 'prod', objects: 8 }] });
    expect(line).toBe('synthesized prod (8 objects) into out/ (argocd/ left as is: --env given) in 12 ms');
  });

  it('300 environments give counts, not names, and the line stays short', () => {
    // GIVEN 300 environments of 13 objects
    const environments = Array.from({ length: 300 }, (_, i) => ({ name: `env-${String(i).padStart(3, '0')}`, objects: 13 }));
    // WHEN summarised
    const line = summaryLine({ ...base, environments, argocd: { objects: 903, crds: 4 }, ms: 2345 });
    // THEN one line of counts
    expect(line).toBe('synthesized 300 environments (3900 objects) into dist/ and 903 Argo CD objects and 4 CRDs into argocd/ in 2345 ms');
    expect(line).not.toContain('\n');
  });

  it('switches to counts exactly when the list of names would pass NAMED_LIST_MAX characters', () => {
    // "x (1 objects)" is 13 characters, joined by ", ": n names take 15n - 2.
    const envs = (n: number) => Array.from({ length: n }, () => ({ name: 'x', objects: 1 }));
    const fits = Math.floor((NAMED_LIST_MAX + 2) / 15);
    expect(summaryLine({ ...base, environments: envs(fits) })).toContain(`x (1 objects), `);
    expect(summaryLine({ ...base, environments: envs(fits + 1) })).toContain(`synthesized ${fits + 1} environments (${fits + 1} objects) into`);
  });

  it('one environment with a long name and many objects is counted too', () => {
    const line = summaryLine({ ...base, environments: [{ name: 'a'.repeat(70), objects: 10003 }] });
    expect(line).toBe('synthesized 1 environment (10003 objects) into dist/ and 12 Argo CD objects and 4 CRDs into argocd/ in 247 ms');
  });
});
