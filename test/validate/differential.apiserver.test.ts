import { beforeAll, describe, expect, it } from 'vitest';
import { dryRunApply, type DryRunResult } from '../support/apiserver.js';
import { ManifestValidator } from '../../validate/validator.js';
import { mapLimit, useApiServer } from './apiserver-client.js';
import { fixtures, ROOT, type Fixture } from './fixtures.js';

/**
 * The in-process validator against the real kube-apiserver (`kubectl apply
 * --dry-run=server --validate=strict`) on every fixture: both must accept or both
 * reject, and a rejection must carry the fixture's expected message on both sides.
 */
describe('differential: in-process validator vs kube-apiserver', () => {
  const server = useApiServer();
  const validator = new ManifestValidator({ root: ROOT });
  const all = [...fixtures('valid'), ...fixtures('invalid')];
  const results = new Map<string, DryRunResult>();

  beforeAll(async () => {
    const runs = await mapLimit(all, 4, (f) => dryRunApply(server(), f.file));
    all.forEach((f, i) => results.set(f.name, runs[i]!));
  });

  it.each(all.map((f) => [f.name, f] as const))('GIVEN %s THEN the API server and the in-process validator agree', (_name, f: Fixture) => {
    const server = results.get(f.name)!;
    const local = validator.validate(f.object).map((i) => `${i.path}: ${i.message}`);
    const serverText = `${server.stderr}${server.stdout}`.trim();
    const verdicts = `fixture ${f.name}\n  API server: ${server.ok ? 'accepted' : `rejected: ${serverText}`}\n  in-process: ${local.length === 0 ? 'accepted' : `rejected: ${local.join('; ')}`}`;
    expect(local.length === 0, verdicts).toBe(server.ok);
    if (f.expect) expect(serverText, verdicts).toContain(f.expect);
  });
});
