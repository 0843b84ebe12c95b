import { defineConfig } from 'vitest/config';

/** Measurements, not tests: `npx vitest run -c vitest.measure.config.ts` (see test/measure/). */
export default defineConfig({
  test: { include: ['test/measure/*.ts'], testTimeout: 600_000, fileParallelism: false },
});
