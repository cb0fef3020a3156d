import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { synthesize } from '../../charts/synth.js';
import { REPO } from '../support/repo.js';

/** The README shows real output; these keep its examples true as the shipped environments change. */
describe('README examples', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

  it('the npm run synth example shows the current object counts and warnings', () => {
    const result = synthesize({ root: REPO });
    const summary = result.environments.map((e) => `${e.environment.name} (${e.objects.length} objects)`).join(', ');
    expect(readme).toMatch(new RegExp(`synthesized ${summary.replace(/[()]/g, '\\$&')} into dist/ and \\d+ Argo CD objects and 4 CRDs into argocd/ in \\d+ ms`));
    for (const w of result.warnings) expect(readme).toContain(`warning: ${w}`);
  });

  it('opens with the two commands', () => {
    expect(readme.split('\n').slice(0, 12).join('\n')).toContain('npm ci && npm run synth');
    expect(readme.split('\n').slice(0, 12).join('\n')).toContain('npm test');
  });
});
