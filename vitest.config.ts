import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // The machine has two cores and every file spawns worker pools: run files one at a time.
    fileParallelism: false,
  },
});
