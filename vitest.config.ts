import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two files at a time: most of a file's time is waiting (servers starting, Redis bounds, liveness
    // keys expiring), and the tests assert decisions rather than speed, so they hold under the extra load.
    // One at a time took over 20 minutes on two cores.
    fileParallelism: true,
    maxWorkers: 2,
    // CI also writes a JSON summary, from which .ci/run prints "N passed, N failed".
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results.json' },
  },
});
