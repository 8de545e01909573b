import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One notice when the real NerdGraph schema is missing (its tests are then skipped).
    globalSetup: ['./test/support/reference-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    restoreMocks: true,
    unstubEnvs: true,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
