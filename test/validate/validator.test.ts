import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestValidator } from '../../validate/validator.js';
import { fixtures, ROOT } from './fixtures.js';

const validator = new ManifestValidator({ root: ROOT });
const render = (issues: ReturnType<ManifestValidator['validate']>) => issues.map((i) => `${i.object}: ${i.path}: ${i.message}`).join('\n');

describe('in-process validation of the fixture corpus', () => {
  const invalid = fixtures('invalid');
  const valid = fixtures('valid');

  it('GIVEN the corpus THEN it has at least 40 invalid and 10 valid manifests', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(40);
    expect(valid.length).toBeGreaterThanOrEqual(10);
  });

  it.each(invalid.map((f) => [f.name, f] as const))('GIVEN %s WHEN validated THEN it is rejected with its expected message', (_name, f) => {
    const issues = validator.validate(f.object);
    expect(render(issues)).toContain(f.expect);
    // Every issue names the object and a field path inside it.
    for (const issue of issues) expect(issue.object).toMatch(/^(NodePool|EC2NodeClass)\/\S+$/);
  });

  it.each(valid.map((f) => [f.name, f] as const))('GIVEN %s WHEN validated THEN it is accepted', (_name, f) => {
    expect(render(validator.validate(f.object))).toBe('');
  });
});

describe('keys JavaScript treats specially', () => {
  it('GIVEN a tag key "__proto__" (JSON.parse makes it an own key) WHEN validated THEN it is checked like any key, not lost in the copy defaulting edits', () => {
    const nodeClass = fixtures('valid').find((f) => f.object.kind === 'EC2NodeClass')!.object as { spec: Record<string, unknown> };
    const hostile = { ...nodeClass, spec: { ...nodeClass.spec, tags: JSON.parse('{"team": "platform", "__proto__": 5}') } };
    expect(Object.keys(hostile.spec.tags as object)).toEqual(['team', '__proto__']);
    const issues = validator.validate(hostile);
    expect(issues.map((i) => i.path)).toEqual(['spec.tags.__proto__']);
    expect(render(validator.validate({ ...hostile, spec: { ...nodeClass.spec, tags: JSON.parse('{"__proto__": "x"}') } }))).toBe('');
  });

  it('GIVEN a selector tag "__proto__" with an empty value WHEN validated THEN the CEL rule sees the key and rejects it', () => {
    const nodeClass = fixtures('valid').find((f) => f.object.kind === 'EC2NodeClass')!.object as { spec: Record<string, unknown> };
    const terms = JSON.parse('[{"tags": {"__proto__": ""}}]');
    const issues = validator.validate({ ...nodeClass, spec: { ...nodeClass.spec, subnetSelectorTerms: terms } });
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual(["spec.subnetSelectorTerms[0].tags: empty tag keys or values aren't supported"]);
  });
});

describe('the on-disk cache of parsed CRDs and compiled schemas', () => {
  it('GIVEN an empty cache dir WHEN a validator runs twice (miss, then hit) THEN both runs report exactly what an uncached validator reports', () => {
    const dir = mkdtempSync(join(tmpdir(), 'validate-cache-'));
    try {
      const corpus = [...fixtures('invalid'), ...fixtures('valid')].map((f) => f.object);
      const runWith = (cacheDir: string | null) => {
        const fresh = new ManifestValidator({ root: ROOT, cacheDir });
        return corpus.map((o) => render(fresh.validate(o)));
      };
      const uncached = runWith(null);
      expect(readdirSync(dir)).toEqual([]);
      const miss = runWith(dir);
      // One parsed CRD (.json) and one compiled schema (.cjs) per kind in the corpus.
      expect(readdirSync(dir).map((f) => f.replace(/^[0-9a-f]{64}/, '<sha256>')).sort()).toEqual(['<sha256>.cjs', '<sha256>.cjs', '<sha256>.json', '<sha256>.json']);
      const hit = runWith(dir);
      expect(miss).toEqual(uncached);
      expect(hit).toEqual(uncached);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
