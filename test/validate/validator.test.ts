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
