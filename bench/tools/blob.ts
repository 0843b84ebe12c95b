/**
 * `blob`: a tool whose result is `bytes` characters of text, for the HTTP
 * memory scenario's large-result figures (time to the last byte, peak RSS).
 * Loaded into ours with `--tools dist-dev/bench/tools/blob.js` beside the
 * built-in tools; (f) has the same tool behind `--blob`
 * (bench/baselines/blob-worker.ts).
 */
import { z } from 'zod';
import { defineTool } from '#dist/src/stages/tool.js';

/** Text of `bytes` ASCII characters, built in the worker. */
export default defineTool({
  name: 'blob',
  description: 'Returns `bytes` characters of text (benchmark).',
  input: z.object({
    bytes: z
      .number()
      .int()
      .min(0)
      .max(64 * 1024 * 1024),
  }),
  stages: [(input: { bytes: number }) => ({ content: [{ type: 'text' as const, text: 'x'.repeat(input.bytes) }] })],
});
