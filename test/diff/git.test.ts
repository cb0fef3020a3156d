import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../diff/git.js';

describe('diff/git: reading committed manifests', () => {
  it('GIVEN a YAML alias in a committed file WHEN parsed THEN it is refused, not expanded', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {x: "1"}\nextra: *d\n';
    expect(() => parseManifests(text, 'dist/dev/x.yaml at abc')).toThrow(/^dist\/dev\/x\.yaml at abc: .*[Aa]lias/);
  });

  it('GIVEN a document that is not a Kubernetes object WHEN parsed THEN the error names the file and what was found', () => {
    expect(() => parseManifests('- 1\n- 2\n', 'dist/dev/y.yaml at abc')).toThrow('dist/dev/y.yaml at abc: must be a Kubernetes object with kind and metadata.name, got [1,2]');
  });

  it('GIVEN several documents and an empty one WHEN parsed THEN each object is returned in order', () => {
    expect(parseManifests('kind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b}\n', 'f').map((m) => m.kind)).toEqual(['A', 'B']);
  });
});
