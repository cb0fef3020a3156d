import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseEnvironment } from '../../config/environment.js';
import { ConfigError } from '../../config/errors.js';
import { parseGitops } from '../../config/gitops.js';
import { knownValuesProblem } from '../../config/karpenter-runtime.js';
import { toRequirement } from '../../config/node-requirements.js';
import { normalizeKey } from '../../diff/requirements.js';
import { ManifestValidator } from '../../validate/validator.js';
import { analyzePool } from '../analyze/support.js';
import { fixtures, ROOT } from '../validate/fixtures.js';
import { REPO } from '../support/repo.js';

/**
 * Keys that JavaScript gives a meaning (`constructor`, `toString`, `valueOf`, `__proto__`)
 * are valid label keys, tag keys and environment names. Each case below crashed synth
 * ("internal error"), passed a check it should fail, or dropped a key before this file.
 */

const FILE = 'environments/prod.yaml';
const prod = () => parse(readFileSync(join(REPO, FILE), 'utf8'));

/** The message parsing `text` fails with. */
function failure(parseText: () => unknown): string {
  try {
    parseText();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

/** `file:line:col` of the first line of `text` that is `needle` after indentation, as the YAML parser counts. */
function positionOf(text: string, needle: string): string {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.trimStart().startsWith(needle));
  return `${line + 1}:${lines[line]!.length - lines[line]!.trimStart().length + 1}`;
}

describe('environment files: a map key cdk8s cannot render is refused where it is written', () => {
  it('GIVEN a NodePool label "constructor" THEN the file, line, path and reason (synth crashed in cdk8s before)', () => {
    const env = prod();
    env.nodePools[0].labels = { team: 'platform', constructor: 'x' };
    const text = stringify(env);
    expect(failure(() => parseEnvironment(FILE, text))).toBe(
      `${FILE}:${positionOf(text, 'constructor: x')}: nodePools[0].labels.constructor: key "constructor" is not allowed: cdk8s, which renders the manifests, cannot render a map with this key (it takes the map for a class instance); rename the key`,
    );
  });

  it('GIVEN labels "toString" and "valueOf" THEN they are plain keys, kept as written', () => {
    const env = prod();
    env.nodePools[0].labels = { toString: 'a', valueOf: 'b' };
    expect(parseEnvironment(FILE, stringify(env)).config.nodePools[0]!.labels).toEqual({ toString: 'a', valueOf: 'b' });
  });
});

describe('gitops.yaml: environment names are names, fleet labels are rendered', () => {
  const gitops = (environments: Record<string, unknown>) =>
    stringify({ repository: { url: 'https://git.example.com/platform/karpenter-gitops.git', targetRevision: 'main' }, argocd: { namespace: 'argocd', project: 'karpenter-gitops' }, environments });

  it('GIVEN an environment named "constructor" THEN gitops.yaml takes it like any other', () => {
    expect(Object.keys(parseGitops('gitops.yaml', gitops({ constructor: { destination: { name: 'c' } } })).config.environments)).toEqual(['constructor']);
  });

  it('GIVEN fleet matchLabels with a key "constructor" THEN refused at its line (an ApplicationSet selector renders it)', () => {
    const text = gitops({ prod: { fleet: { matchLabels: { constructor: 'x' } } } });
    expect(failure(() => parseGitops('gitops.yaml', text))).toBe(
      `gitops.yaml:${positionOf(text, 'constructor: x')}: environments.prod.fleet.matchLabels.constructor: key "constructor" is not allowed: cdk8s, which renders the manifests, cannot render a map with this key (it takes the map for a class instance); rename the key`,
    );
  });
});

describe('tables looked up by a key the user wrote answer with their own entries only', () => {
  it('GIVEN requirement keys "constructor" and "toString" THEN no known-values problem and the key stays the key (it became Object.prototype.toString)', () => {
    expect(knownValuesProblem({ key: 'constructor', operator: 'In', values: ['a'] })).toBeUndefined();
    expect(toRequirement({ key: 'toString', operator: 'In', values: ['x'] }).key).toBe('toString');
    expect([normalizeKey('toString'), normalizeKey('failure-domain.beta.kubernetes.io/zone')]).toEqual(['toString', 'topology.kubernetes.io/zone']); // npm run diff's copy
    // The tables still answer their own keys.
    expect(toRequirement({ key: 'beta.kubernetes.io/arch', operator: 'In', values: ['arm64'] }).key).toBe('kubernetes.io/arch');
    expect(knownValuesProblem({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['cheap'] })).toBe('must include one of on-demand, spot, reserved for karpenter.sh/capacity-type (Karpenter refuses the NodePool otherwise)');
  });

  it('GIVEN minValues on a label no instance type has ("constructor") THEN the analyzer says it cannot be met (a type\'s constructor counted as a value before)', () => {
    const { analysis } = analyzePool([{ key: 'constructor', operator: 'Exists', minValues: 1 }]);
    expect(analysis.findings.filter((f) => f.code === 'min-values-unsatisfiable').map((f) => f.path)).toEqual(['nodePools[0].requirements[0].minValues']);
  });

  it('GIVEN an unknown field named "constructor" in a manifest THEN the validator reports it as it reports any unknown field', () => {
    const validator = new ManifestValidator({ root: ROOT });
    const nodeClass = fixtures('valid').find((f) => f.object.kind === 'EC2NodeClass')!.object as { spec: Record<string, unknown> };
    const messages = (field: string, value: unknown) => validator.validate({ ...nodeClass, spec: { ...nodeClass.spec, [field]: value } }).map((i) => `${i.path}: ${i.message}`);
    // null too: pruning took Object.prototype.constructor for the field's schema and dropped the field unseen.
    for (const value of ['x', null]) {
      const bogus = messages('bogus', value);
      expect(bogus).toHaveLength(1);
      expect(messages('constructor', value)).toEqual(bogus.map((m) => m.replaceAll('bogus', 'constructor')));
    }
  });
});
