import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse, visit, type Scalar } from 'yaml';
import { documentYaml, fastYaml, plainScalarIsAmbiguous, renderFiles, toYaml } from '../../charts/render.js';
import { synthesizeInput } from '../validate/arbitraries.js';
import { REPO, snapshotTree } from '../support/repo.js';

/**
 * Strings YAML readers disagree on. kubectl, Argo CD and the API server read YAML with
 * go-yaml v2 (YAML 1.1 plus Go's integer syntax); editors and JavaScript tools with 1.2.
 */
const AMBIGUOUS = ['0o17', '0o10', 'yes', 'no', 'on', 'off', 'y', 'n', 'Y', 'NO', 'true', 'null', '~', '1_000', '0x1F', '0b101', '017', '08', '.inf', '-.inf', '.nan', '1:20', '1e3', '+1', '.5', '1.0', '2026-11-30'];

/** Every plain (unquoted) scalar of a YAML text, with the value each reader gives it. */
function plainScalars(text: string): Array<{ source: string; v11: unknown; v12: unknown }> {
  const out: Array<{ source: string; v11: unknown; v12: unknown }> = [];
  for (const doc of parseAllDocuments(text, { version: '1.1', keepSourceTokens: true })) {
    visit(doc, {
      Scalar(_k, node: Scalar) {
        if (node.type !== 'PLAIN' || node.source === undefined) return;
        out.push({ source: node.source, v11: node.value, v12: parse(node.source, { version: '1.2' }) });
      },
    });
  }
  return out;
}

/** Plain scalars that are strings to one reader and something else to another. */
function misread(text: string): string[] {
  return plainScalars(text)
    .filter(({ source, v11, v12 }) => (typeof v11 === 'string' || typeof v12 === 'string') && (v11 !== v12 || plainScalarIsAmbiguous(source)))
    .map(({ source, v11, v12 }) => `${source} (YAML 1.1: ${JSON.stringify(v11)}, YAML 1.2: ${JSON.stringify(v12)})`);
}

/** Every generated YAML file Argo CD would apply, as repository-relative path -> text. */
function generatedFiles(): Array<[string, string]> {
  return ['dist', 'argocd'].flatMap((dir) =>
    Object.entries(snapshotTree(join(REPO, dir)))
      .filter(([name]) => name.endsWith('.yaml'))
      .map(([name, text]): [string, string] => [`${dir}/${name}`, text]),
  );
}

describe('toYaml: strings stay strings for every YAML reader', () => {
  it.each(AMBIGUOUS)('GIVEN the string %j as a value and as a key WHEN rendered THEN YAML 1.1 and 1.2 both read the same string back', (s) => {
    const object = { metadata: { labels: { [s]: s } }, values: [s] };
    const text = toYaml(object);
    expect(parse(text, { version: '1.1' })).toEqual(object);
    expect(parse(text, { version: '1.2' })).toEqual(object);
    expect(misread(text)).toEqual([]);
    expect(text).toContain(`"${s}": "${s}"`);
  });

  it('GIVEN plain words, numbers, booleans and multi-line text THEN they are written as before: unquoted, typed, block scalars', () => {
    const text = toYaml({ name: 'default', replicas: 2, enabled: true, cpu: '500m', text: 'line one\nline two\n' });
    expect(text).toBe('name: default\nreplicas: 2\nenabled: true\ncpu: 500m\ntext: |\n  line one\n  line two\n');
  });

  it('GIVEN an environment with labels "0o17" and requirement values ["0o10", "yes"] WHEN synthesized and rendered THEN the NodePool file reads back as strings in YAML 1.1', () => {
    const objects = synthesizeInput({
      cluster: { name: 'karpenter-prop', region: 'us-east-1', kubernetesVersion: '1.36', vpcId: 'vpc-0123456789abcdef0', privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'] },
      nodeClasses: [{ name: 'default' }],
      nodePools: [{ name: 'default', labels: { team: '0o17', tier: 'on' }, requirements: [{ key: 'example.com/zone', operator: 'In', values: ['0o10', 'yes', '1_000'] }] }],
    });
    const file = renderFiles(objects, 'dist/prop').get('NodePool.default.k8s.yaml')!;
    const pool = parse(file, { version: '1.1' });
    expect(pool.spec.template.metadata.labels).toMatchObject({ team: '0o17', tier: 'on' });
    expect(pool.spec.template.spec.requirements).toContainEqual({ key: 'example.com/zone', operator: 'In', values: ['0o10', 'yes', '1_000'] });
    expect(misread(file)).toEqual([]);
  });

  it('the check itself catches an unquoted ambiguous string', () => {
    expect(misread('team: 0o17\nflag: on\nsize: 1_000\nhex: 0x1F\nname: default\nreplicas: 2\n')).toEqual([
      '0o17 (YAML 1.1: "0o17", YAML 1.2: 15)',
      'on (YAML 1.1: true, YAML 1.2: "on")',
      '1_000 (YAML 1.1: 1000, YAML 1.2: "1_000")',
    ]);
  });
});

describe('plainScalarIsAmbiguous: the shortcut for name-like strings agrees with parsing them', () => {
  /** The rule without the shortcut, written again here: what YAML 1.1, YAML 1.2 and Go's ParseInt make of the plain scalar. */
  const byParsing = (text: string): boolean => {
    if (/^[-+]?(0[xX][_0-9a-fA-F]+|0[oO][_0-7]+|0[bB][_01]+|[0-9][_0-9]*)$/.test(text)) return true;
    try {
      return parse(text, { version: '1.1', logLevel: 'error' }) !== text || parse(text, { version: '1.2', logLevel: 'error' }) !== text;
    } catch {
      return true;
    }
  };
  const nameLike = fc.oneof(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_./-]{0,12}$/), fc.stringMatching(/^[A-Za-z][-+0-9_.eE]{0,6}$/));
  const words = fc.constantFrom('y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', 'nan', 'inf', 'e', 'x', 'o', 'b').chain((w) =>
    fc.array(fc.boolean(), { minLength: w.length, maxLength: w.length }).map((upper) => [...w].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
  );

  it('GIVEN name-like strings and boolean/null words in any case WHEN judged THEN the answer is the one parsing gives', () => {
    fc.assert(fc.property(fc.oneof(nameLike, words), (s) => plainScalarIsAmbiguous(s) === byParsing(s)), { numRuns: 20000 });
  });

  it('GIVEN strings YAML reads as tags, anchors or aliases (!x, &a, *a) THEN they are ambiguous, and judging them prints no YAMLWarning', async () => {
    const warnings: string[] = [];
    const listener = (w: Error) => warnings.push(w.message);
    process.on('warning', listener);
    try {
      // Strings no other test judges (the answers are memoized per process).
      expect(['!warning-test', '!!str warning-test', '&warning-test x', '*warning-test', '%warning-test'].filter((s) => !plainScalarIsAmbiguous(s))).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on a later tick
    } finally {
      process.off('warning', listener);
    }
    expect(warnings).toEqual([]);
  });

  it('GIVEN every ambiguous string of the table THEN it is ambiguous, and "Yes", "OFF" and "e0" (a float to YAML 1.1 in the yaml package) too', () => {
    expect([...AMBIGUOUS, 'Yes', 'OFF', 'e0', 'E-5'].filter((s) => !plainScalarIsAmbiguous(s))).toEqual([]);
  });
});

describe('fastYaml: the same bytes as the yaml document, or no answer', () => {
  it('GIVEN every committed object of dist/ and argocd/ THEN fastYaml gives the document path\'s text or nothing, and every NodePool and EC2NodeClass takes the fast path', () => {
    const taken: string[] = [];
    for (const [file, text] of generatedFiles()) {
      for (const doc of parseAllDocuments(text, { version: '1.1', logLevel: 'error' })) {
        const value = doc.toJS();
        const fast = fastYaml(value);
        if (fast !== undefined) {
          expect(fast, file).toBe(documentYaml(value));
          taken.push((value as { kind: string }).kind);
        }
      }
    }
    const kinds = (kind: string) => generatedFiles().filter(([file]) => file.split('/').at(-1)!.startsWith(`${kind}.`)).length;
    for (const kind of ['NodePool', 'EC2NodeClass']) {
      expect(kinds(kind)).toBeGreaterThan(0);
      expect(taken.filter((k) => k === kind)).toHaveLength(kinds(kind));
    }
    expect(taken.length).toBeGreaterThan(20);
  });

  // Strings from the characters the shortcut allows and those it must not (indicators,
  // ': ', ' #', quotes, trailing blanks, newlines), and the ambiguous words.
  const tricky = fc.oneof(
    fc.stringMatching(/^[-a-z0-9 :#'"%*&!|>@`,?[\]{}=~._/\n]{0,8}$/),
    fc.constantFrom(...AMBIGUOUS, 'a: b', 'a #b', 'x:', ' x', 'x ', '10%', '*', '-', '- x', '? x', 'e0', 'Yes', ''),
  );
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, tie('scalar'), tie('list'), tie('map')),
    scalar: fc.oneof(tricky, fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true })),
    list: fc.array(tie('node'), { maxLength: 4 }),
    map: fc.dictionary(tricky, tie('node'), { maxKeys: 4 }),
  })).node;

  it('GIVEN generated values WHEN fastYaml answers THEN it is the document path\'s text', () => {
    let answered = 0;
    fc.assert(
      fc.property(value, (v) => {
        const fast = fastYaml(v);
        if (fast === undefined) return true;
        answered += 1;
        return fast === documentYaml(v);
      }),
      { numRuns: 5000 },
    );
    expect(answered).toBeGreaterThan(500); // the property is not vacuous
  });

  it('GIVEN a key and a value over 1,000 characters (YAML writes keys over 1,024 as explicit `? key`) THEN fastYaml leaves them to the document path, and toYaml reads back the same', () => {
    const long = 'k'.repeat(1100);
    const value = { metadata: { annotations: { [long]: long } } };
    expect(fastYaml(value)).toBeUndefined();
    expect(toYaml(value)).toBe(documentYaml(value));
    expect(parse(toYaml(value), { version: '1.1' })).toEqual(value);
  });
});

describe('committed output: every plain scalar in dist/ and argocd/ means the same to YAML 1.1, YAML 1.2 and go-yaml', () => {
  const files = generatedFiles();
  it('there is output to check', () => expect(files.length).toBeGreaterThan(20));
  it.each(files)('%s', (_name, text) => {
    expect(misread(text)).toEqual([]);
  });
});
