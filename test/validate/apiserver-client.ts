import { afterAll, beforeAll, inject } from 'vitest';
import { attachApiServer, startApiServer, type ApiServer, type ApiServerClient } from '../support/apiserver.js';
import { crdFiles } from '../support/apiserver-global-setup.js';

/**
 * The shared test API server when the apiserver globalSetup provided one; otherwise
 * (this file run on its own) a private one with the vendored CRDs, stopped afterwards.
 */
export function useApiServer(): () => ApiServerClient {
  let client: ApiServerClient | undefined;
  let own: ApiServer | undefined;
  beforeAll(async () => {
    const kubeconfig = inject('kubeconfig');
    const binDir = inject('kubeBinDir');
    if (kubeconfig && binDir) client = attachApiServer(kubeconfig, binDir);
    else client = own = await startApiServer({ crdFiles: crdFiles() });
  });
  afterAll(async () => {
    await own?.stop();
  });
  return () => {
    if (!client) throw new Error('the API server must be started by beforeAll first');
    return client;
  };
}

/** Runs `task` over `items` with at most `limit` in flight (kubectl calls on 2 cores). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
