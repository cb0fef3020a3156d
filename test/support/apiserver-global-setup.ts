/**
 * vitest globalSetup: one real kube-apiserver for the whole run, with the
 * vendored Karpenter and Argo CD CRDs installed and Established.
 *
 * Tests read it with:
 *   const server = attachApiServer(inject('kubeconfig'), inject('kubeBinDir'));
 *   const res = await dryRunApply(server, file);
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findRepoRoot, startApiServer, type ApiServer } from './apiserver.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the kubeconfig for the shared test API server. */
    kubeconfig: string;
    /** Directory holding the pinned kube-apiserver, kubectl and etcd. */
    kubeBinDir: string;
  }
}

/** Vendored CRD directories, relative to the repository root. */
export const CRD_DIRS = ['crds/karpenter', 'crds/argocd'] as const;

/**
 * Every `*.yaml` in the CRD dirs that holds a CustomResourceDefinition, sorted
 * (skips e.g. a kustomization.yaml vendored beside them).
 * KARPENTER_GITOPS_CRD_DIRS (colon-separated, absolute) overrides the dirs.
 */
export function crdFiles(repoRoot: string = findRepoRoot()): string[] {
  const override = process.env.KARPENTER_GITOPS_CRD_DIRS;
  const dirs = override ? override.split(':').filter(Boolean) : CRD_DIRS.map((d) => join(repoRoot, d));
  const files = dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => join(dir, f))
      .filter((f) => /^kind:\s*CustomResourceDefinition\s*$/m.test(readFileSync(f, 'utf8'))),
  );
  if (files.length === 0) throw new Error(`CRD dirs must hold CustomResourceDefinition files, got none in ${dirs.join(', ')}`);
  return files;
}

let server: ApiServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  server = await startApiServer({ crdFiles: crdFiles(), namespaces: ['argocd'] });
  console.error(`test kube-apiserver ready at ${server.url} in ${Date.now() - started} ms (logs: ${server.workDir})`);
  project.provide('kubeconfig', server.kubeconfig);
  project.provide('kubeBinDir', server.binDir);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = undefined;
}
