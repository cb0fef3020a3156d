import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

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
