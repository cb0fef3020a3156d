import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    // Tests that start real servers (moto, kube-apiserver) share them through global setup.
    globalSetup: [],
    reporters: ['default'],
  },
});
