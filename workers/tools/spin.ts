/**
 * `spin`: the benchmark tool. Burns CPU for `ms` milliseconds in slices of
 * `stageMs`, checking for cancellation between slices; `cooperative: false`
 * never checks, to exercise the hard stop.
 */
import { z } from 'zod';
import { defineTool, stage } from '../../src/stages/tool.js';
import { burn } from './burn.js';

export const spin = defineTool({
  name: 'spin',
  title: 'Spin (benchmark)',
  description:
    'Burns CPU for `ms` milliseconds in slices of `stageMs`, checking for cancellation between slices. For benchmarking and testing cancellation.',
  input: z.object({
    ms: z.number().min(0).max(3_600_000).describe('Total CPU time to burn, in milliseconds.'),
    stageMs: z
      .number()
      .positive()
      .max(60_000)
      .default(1)
      .describe('Length of one slice between cancellation checks, in milliseconds (default 1).'),
    cooperative: z.boolean().default(true).describe('If false, never checks for cancellation (tests the hard stop).'),
  }),
  output: z.strictObject({
    sliceCount: z.number().int().min(1).describe('Slices run (ms / stageMs, rounded up).'),
    elapsedMs: z.number().min(0).describe('Wall-clock time the burning took, in milliseconds.'),
  }),
  stages: [
    stage('burn', (input: { ms: number; stageMs: number; cooperative: boolean }, ctx) => {
      const slices = Math.max(1, Math.ceil(input.ms / input.stageMs));
      const started = performance.now();
      // Tells a client (or a test) the moment the uncheckable part begins: a cancel after it ends in a hard stop.
      if (!input.cooperative) ctx.progress(0, slices, 'running without checkpoints');
      for (let i = 0; i < slices; i++) {
        if (input.cooperative) ctx.checkpoint();
        burn(Math.min(input.stageMs, input.ms - i * input.stageMs));
        if (input.cooperative) ctx.progress(i + 1, slices, `slice ${i + 1}/${slices}`);
      }
      return { sliceCount: slices, elapsedMs: performance.now() - started };
    }),
    stage('report', (r: { sliceCount: number; elapsedMs: number }) => ({
      content: [{ type: 'text' as const, text: `spun ${r.sliceCount} slices in ${r.elapsedMs.toFixed(1)} ms` }],
      structuredContent: r,
    })),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' }, // long CPU work: a client may run it as a task
});
