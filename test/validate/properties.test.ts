import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/errors.js';
import { ManifestValidator } from '../../validate/validator.js';
import { environmentInput, FORBIDDEN_MUTATIONS, synthesizeInput } from './arbitraries.js';
import { ROOT } from './fixtures.js';

const validator = new ManifestValidator({ root: ROOT });

describe('property: valid environment configs synthesize into manifests the CRDs accept', () => {
  it('GIVEN any valid environment input WHEN synthesized THEN every custom resource passes in-process validation', () => {
    fc.assert(
      fc.property(environmentInput, (input) => {
        const objects = synthesizeInput(input);
        const issues = objects.filter((o) => validator.handles(o)).flatMap((o) => validator.validate(o));
        expect(issues).toEqual([]);
        expect(objects.filter((o) => o.kind === 'NodePool')).toHaveLength((input.nodePools as unknown[]).length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('property: changes the schema forbids are rejected, with a field path', () => {
  it('GIVEN a valid input with one forbidden change WHEN synthesized THEN the zod layer or the in-process validator rejects it', () => {
    fc.assert(
      fc.property(environmentInput, fc.constantFrom(...FORBIDDEN_MUTATIONS), fc.nat(), (input, [what, mutate], index) => {
        const env = structuredClone(input) as Parameters<typeof mutate>[0];
        mutate(env, index);
        let paths: string[];
        try {
          const objects = synthesizeInput(env);
          paths = objects.filter((o) => validator.handles(o)).flatMap((o) => validator.validate(o)).map((i) => i.path);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          paths = err.issues.map((i) => i.path);
        }
        expect(paths.length, `${what} was accepted`).toBeGreaterThan(0);
        for (const path of paths) expect(path, `${what}: an issue without a field path`).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Changes the zod layer lets through and only the CRD rules catch: the reason synth
 * validates rendered manifests at all. If zod learns one of them, move it out of here.
 */
describe('forbidden changes only the in-process validator catches', () => {
  const base = () => fc.sample(environmentInput, { numRuns: 1, seed: 42 })[0]! as Parameters<(typeof FORBIDDEN_MUTATIONS)[number][1]>[0];
  it.each([
    ['AMI id without amiFamily', 'EC2NodeClass', 'must specify amiFamily if amiSelectorTerms does not contain an alias'],
    ['alias with an amiFamily of another family', 'EC2NodeClass', "if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias"],
    ['static pool on a preset with cpu limits', 'NodePool', "only 'limits.nodes' is supported on static NodePools"],
  ])('GIVEN "%s" THEN zod accepts it and the %s is rejected with "%s"', (what, kind, message) => {
    const env = base();
    FORBIDDEN_MUTATIONS.find(([name]) => name === what)![1](env, 0);
    const issues = synthesizeInput(env)
      .filter((o) => o.kind === kind)
      .flatMap((o) => validator.validate(o));
    expect(issues).toContainEqual(expect.objectContaining({ path: 'spec', message }));
  });

  // config/karpenter-schema.ts uses z.record(z.enum(...), ...), which zod 4 makes
  // exhaustive: a kubelet systemReserved of only cpu is refused for lacking memory,
  // ephemeral-storage and pid, though Karpenter accepts it (z.partialRecord fixes it).
  // This test fails, turning the suite red, once that is fixed: then delete it and let
  // the arbitrary in arbitraries.ts generate partial maps.
  it.fails('GIVEN a kubelet systemReserved with only cpu THEN the zod layer accepts it (known gap: exhaustive enum records)', () => {
    const env = base();
    env.nodeClasses[0]!.kubelet = { systemReserved: { cpu: '100m' } };
    expect(() => synthesizeInput(env)).not.toThrow();
  });
});
