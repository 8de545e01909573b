import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'sandbox/test/**/*.test.ts', 'mappings/**/*.test.ts'],
    // One notice when the real NerdGraph schema is missing (its tests are then skipped).
    globalSetup: ['./test/support/reference-setup.ts'],
    // Two test files at once on a 2-core machine (vitest's default there is one: cores - 1). Most
    // files spend their time waiting on loopback servers, child processes and timers: the whole
    // suite took 589 s with one worker and 355 s with two on this project's 2-core machine.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    restoreMocks: true,
    unstubEnvs: true,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
