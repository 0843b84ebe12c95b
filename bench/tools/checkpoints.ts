/**
 * `checkpoints`: a tool that calls `ctx.checkpoint()` `n` times and nothing
 * else, and says how long that took on its worker thread, for the
 * checkpoint-gap overhead bench (bench/checkpoint-overhead.ts): the cost of a
 * check with the gap measured against one without, with no dispatch noise.
 */
import { z } from 'zod';
import { defineTool } from '#dist/src/stages/tool.js';
import type { StageContext } from '#dist/src/stages/tool.js';

/** This thread's CPU time (ms): `process.threadCpuUsage()`, Node 23.9 and later (not yet in @types/node). */
function threadCpuMs(): number {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage?.();
  return usage ? (usage.user + usage.system) / 1000 : Number.NaN;
}

export default defineTool({
  name: 'checkpoints',
  description: 'Calls ctx.checkpoint() n times; returns the worker-side time in ms (benchmark).',
  input: z.object({ n: z.number().int().min(0).max(1e10) }),
  stages: [
    function loop({ n }: { n: number }, ctx: StageContext) {
      const c0 = threadCpuMs();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) ctx.checkpoint();
      // CPU time of this thread too: on a shared machine, wall time mostly says how long the thread waited for a core.
      return { ms: performance.now() - t0, cpuMs: threadCpuMs() - c0 };
    },
  ],
});
