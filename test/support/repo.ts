import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse, stringify } from 'yaml';

/** The repository under test (this checkout). */
export const REPO = join(import.meta.dirname, '..', '..');

/**
 * A throwaway copy of the inputs (environments, outputs, gitops.yaml, vendored CRDs, the instance catalogue, and optionally dist/) so a
 * test can break them without touching the checkout. Removed by `dispose()`.
 */
export function tempRepo(opts: { withDist?: boolean } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'karpenter-gitops-'));
  cpSync(join(REPO, 'environments'), join(root, 'environments'), { recursive: true });
  cpSync(join(REPO, 'infra', 'outputs'), join(root, 'infra', 'outputs'), { recursive: true });
  cpSync(join(REPO, 'crds'), join(root, 'crds'), { recursive: true });
  cpSync(join(REPO, 'catalogue'), join(root, 'catalogue'), { recursive: true });
  cpSync(join(REPO, 'gitops.yaml'), join(root, 'gitops.yaml'));
  if (opts.withDist) cpSync(join(REPO, 'dist'), join(root, 'dist'), { recursive: true });
  return {
    root,
    /** Loads environments/<env>.yaml, lets `edit` change it, writes it back. */
    editEnvironment(env: string, edit: (doc: any) => void) {
      const file = join(root, 'environments', `${env}.yaml`);
      const doc = parse(readFileSync(file, 'utf8'));
      edit(doc);
      writeFileSync(file, stringify(doc));
    },
    writeEnvironmentText(env: string, text: string) {
      writeFileSync(join(root, 'environments', `${env}.yaml`), text);
    },
    editOutputs(env: string, edit: (o: any) => void) {
      const file = join(root, 'infra', 'outputs', `${env}.json`);
      const o = JSON.parse(readFileSync(file, 'utf8'));
      edit(o);
      writeFileSync(file, JSON.stringify(o, null, 2));
    },
    dispose() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Every file under dir as relative path -> content, for byte-for-byte comparisons. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}
