import { defineConfig } from 'vitest/config';

/**
 * Four projects, so each suite starts only the real component it needs:
 *   unit       pure code, no servers
 *   apiserver  a real kube-apiserver 1.36 + etcd with the vendored CRDs (built once from Go modules)
 *   aws        a real moto server on loopback (installed once into a virtualenv); each file starts its own
 *   simulate   Karpenter's own scheduler, offline (a Go binary built once from simulate/)
 * `npm test` runs them all; `npx vitest run --project apiserver` runs one.
 */
export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // Most unit files spawn the real CLI and wait on it: two workers keep both cores busy
          // (the default on 2 cores is one).
          maxWorkers: 2,
          // A project with its own maxWorkers runs as its own group (vitest): after the others.
          sequence: { groupOrder: 1 },
          // No module state is shared on purpose (caches are pure memos), so each worker loads the
          // program once rather than once per file.
          isolate: false,
          include: ['test/config/**/*.test.ts', 'test/charts/**/*.test.ts', 'test/analyze/**/*.test.ts', 'test/diff/**/*.test.ts', 'test/catalogue/**/*.test.ts', 'test/validate/**/*.test.ts', 'test/infra/**/*.test.ts', 'test/scripts/**/*.test.ts'],
          exclude: ['**/*.apiserver.test.ts', 'test/infra/moto.test.ts', 'test/catalogue/moto.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'apiserver',
          include: ['test/apiserver/**/*.test.ts', 'test/**/*.apiserver.test.ts'],
          globalSetup: ['test/support/apiserver-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'aws', include: ['test/infra/moto.test.ts', 'test/catalogue/moto.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'simulate',
          include: ['test/simulate/**/*.test.ts'],
          globalSetup: ['test/support/simulate-global-setup.ts'],
        },
      },
    ],
  },
});
