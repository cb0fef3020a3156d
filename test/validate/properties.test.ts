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
 * Changes the property tests above first found only the CRD rules catching; the zod layer
 * now refuses them too, at the field the user wrote, before any manifest is built.
 */
describe('forbidden changes the zod layer reports at the environment field', () => {
  const base = () => fc.sample(environmentInput, { numRuns: 1, seed: 42 })[0]! as Parameters<(typeof FORBIDDEN_MUTATIONS)[number][1]>[0];
  it.each([
    ['AMI id without amiFamily', 'nodeClasses[0].amiFamily: is required when amiSelectorTerms has no alias (Karpenter needs it to build user data), got nothing'],
    ['alias with an amiFamily of another family', 'nodeClasses[0].amiFamily: must be Custom or the family of alias "bottlerocket@latest", got "AL2023"'],
    ['static pool on a preset with cpu limits', 'nodePools[0].replicas: makes this a static NodePool, which takes only limits.nodes, but preset spot-multi-arch sets limits cpu, memory: add limits: {nodes: N}, got 3'],
  ])('GIVEN "%s" THEN the zod layer rejects it: %s', (what, message) => {
    const env = base();
    FORBIDDEN_MUTATIONS.find(([name]) => name === what)![1](env, 0);
    let error: unknown;
    try {
      synthesizeInput(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => `${i.path}: ${i.message}`)).toContain(message);
  });

  it('GIVEN a kubelet systemReserved with only cpu THEN the zod layer accepts it (any subset of the keys)', () => {
    const env = base();
    env.nodeClasses[0]!.kubelet = { systemReserved: { cpu: '100m' }, evictionHard: { 'memory.available': '5%' } };
    expect(() => synthesizeInput(env)).not.toThrow();
  });
});
