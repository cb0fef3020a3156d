import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { CLUSTER } from './arbitraries.js';

/** Repository root (the tests run from it, but say so explicitly). */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export interface Fixture {
  /** `invalid/ami-alias-with-tags.yaml` */
  readonly name: string;
  readonly file: string;
  readonly object: Record<string, unknown>;
  /** From the `# expect: ...` header; undefined for valid fixtures. */
  readonly expect?: string;
}

/** Every fixture of `valid` or `invalid`, sorted; an invalid one without `# expect:` is a broken fixture. */
export function fixtures(kind: 'valid' | 'invalid'): Fixture[] {
  const dir = join(FIXTURES, kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const file = join(dir, f);
      const text = readFileSync(file, 'utf8');
      const expect = /^# expect: (.+)$/m.exec(text)?.[1];
      if (kind === 'invalid' && !expect) throw new Error(`${file}: must start with a "# expect: <message substring>" line`);
      return { name: `${kind}/${f}`, file, object: parse(text) as Record<string, unknown>, expect };
    });
}

/**
 * The edge corpus (test/fixtures/edges/): environment-file fragments at the edge of each
 * rule the project enforces beyond the CRDs. `inside/` must be accepted by synth and the
 * API server; `outside/` refused by synth with `# expect:`. Each names its `# source:`.
 */
export interface EdgeFixture {
  readonly name: string;
  readonly rule: string;
  readonly source: string;
  readonly expect?: string;
  /** For an outside fixture: the inside fixture at the same rule's edge. */
  readonly inside?: string;
  /** The fragment: nodePools, nodeClasses, workloads, and cluster fields to override. */
  readonly input: Record<string, unknown>;
}

export function edgeFixtures(kind: 'inside' | 'outside'): EdgeFixture[] {
  const dir = join(FIXTURES, 'edges', kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      const header = (name: string) => new RegExp(`^# ${name}: (.+)$`, 'm').exec(text)?.[1];
      const [rule, source, expect, inside] = [header('rule'), header('source'), header('expect'), header('inside')];
      if (!rule || !source || (kind === 'outside' && (!expect || !inside))) {
        throw new Error(`${dir}/${f}: must start with "# rule:", "# source:"${kind === 'outside' ? ', "# expect:" and "# inside:"' : ''} lines`);
      }
      return { name: `${kind}/${f}`, rule, source, expect, inside: inside && `inside/${inside}`, input: parse(text) as Record<string, unknown> };
    });
}

/** An edge fragment completed into a whole environment file's content. */
export function environmentFor(f: EdgeFixture): Record<string, unknown> {
  const { cluster, ...rest } = f.input as { cluster?: Record<string, unknown> };
  return { cluster: { ...CLUSTER, ...cluster }, ...rest };
}
