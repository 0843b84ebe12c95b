/**
 * The CPU-heavy tools of examples/embed/server.mjs, run on the pool's worker
 * threads. A tool module: loaded once on the main thread (for names and
 * schemas) and once in every worker (for the stages). Each stage checks
 * `ctx.checkpoint()` inside its loop, so a cancelled call stops at once.
 */
import { defineTool, stage, z } from 'mcp-cancel-pool/tools';

/** Keeps this thread busy for `ms` milliseconds. */
function burn(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

export const spin = defineTool({
  name: 'spin',
  title: 'Spin',
  description:
    'Burns CPU for `ms` milliseconds in slices of `stageMs`, checking for cancellation between slices and reporting progress after each.',
  input: z.object({
    ms: z.number().min(0).max(3_600_000).describe('Total CPU time to burn, in milliseconds.'),
    stageMs: z
      .number()
      .positive()
      .max(60_000)
      .default(5)
      .describe('One slice between cancellation checks, in milliseconds.'),
    cooperative: z.boolean().default(true).describe('If false, never checks for cancellation (shows the hard stop).'),
  }),
  output: z.object({ slices: z.number().int(), elapsedMs: z.number() }),
  stages: [
    stage('burn', (input, ctx) => {
      const slices = Math.max(1, Math.ceil(input.ms / input.stageMs));
      const started = performance.now();
      if (!input.cooperative) ctx.progress(0, slices, 'running without checkpoints');
      for (let i = 0; i < slices; i++) {
        if (input.cooperative) ctx.checkpoint();
        burn(Math.min(input.stageMs, input.ms - i * input.stageMs));
        if (input.cooperative) ctx.progress(i + 1, slices, `slice ${i + 1}/${slices}`);
      }
      return { slices, elapsedMs: performance.now() - started };
    }),
    stage('report', (r) => ({
      content: [{ type: 'text', text: `spun ${r.slices} slices in ${r.elapsedMs.toFixed(1)} ms` }],
      structuredContent: r,
    })),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});

export const countPrimes = defineTool({
  name: 'count_primes',
  title: 'Count primes',
  description: 'Counts the primes below `limit` by trial division; logs when it starts and ends. Stopped after 10 s.',
  input: z.object({ limit: z.number().int().min(2).max(1e12).describe('Count the primes below this number.') }),
  timeoutMs: 10_000,
  stages: [
    stage('count', ({ limit }, ctx) => {
      ctx.log('info', `counting primes below ${limit}`);
      let count = 0;
      for (let n = 2; n < limit; n++) {
        if ((n & 0xffff) === 0) {
          ctx.checkpoint();
          ctx.progress(n, limit);
        }
        let prime = true;
        for (let d = 2; d * d <= n; d++)
          if (n % d === 0) {
            prime = false;
            break;
          }
        if (prime) count++;
      }
      ctx.log('info', `found ${count}`);
      return `${count} primes below ${limit}`;
    }),
  ],
  annotations: { readOnlyHint: true, openWorldHint: false },
});

export default [spin, countPrimes];
