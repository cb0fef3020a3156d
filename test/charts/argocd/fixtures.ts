import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { synthesizeArgocd, type ArgocdResult } from '../../../charts/argocd/synth.js';
import { synthesize } from '../../../charts/synth.js';

export const REPO = resolve(import.meta.dirname, '../../..');

/** A scratch copy of the repository's inputs (environments, outputs, vendored CRDs, gitops.yaml), to change one thing in. */
export function copyRepo(): { root: string; write: (rel: string, text: string) => void; edit: (rel: string, f: (text: string) => string) => void; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'argocd-test-'));
  for (const rel of ['environments', 'infra/outputs', 'crds/karpenter', 'gitops.yaml']) cpSync(join(REPO, rel), join(root, rel), { recursive: true });
  return {
    root,
    write: (rel, text) => writeFileSync(join(root, rel), text),
    edit: (rel, f) => writeFileSync(join(root, rel), f(readFileSync(join(root, rel), 'utf8'))),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The whole synth in memory, as `npm run synth` does it, for the repository at `root`. */
export async function synthAll(root: string): Promise<{ dist: ReturnType<typeof synthesize>; argocd: ArgocdResult }> {
  const dist = synthesize({ root });
  return { dist, argocd: await synthesizeArgocd({ root, environments: dist.environments }) };
}

export type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string>; finalizers?: string[]; labels?: Record<string, string> }; spec?: any };

/** Parsed objects of a rendered tree (path -> YAML). */
export function parseFiles(files: ReadonlyMap<string, string>): Map<string, Obj> {
  return new Map([...files].map(([f, text]) => [f, parse(text) as Obj]));
}

/** The committed tree on disk, parsed: what Argo CD (and the bootstrap kubectl apply) will read. */
export function readTree(dir: string): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else out.set(p, parse(readFileSync(join(dir, p), 'utf8')) as Obj);
    }
  };
  walk('');
  return out;
}

export const byName = (objs: Iterable<Obj>, kind: string, name: string) => {
  const found = [...objs].find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
