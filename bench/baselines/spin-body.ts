/**
 * The `spin` tool body shared by every baseline server, kept free of zod and
 * the SDK so that a worker which loads it starts as fast as it can (a fair
 * respawn cost for the baselines that terminate workers).
 *
 * `burn` is the one workers/tools/spin.ts uses (its module imports nothing),
 * and the slice loop is the same as spin's.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { burn } from '#dist/workers/tools/burn.js';

export interface SpinArgs {
  readonly ms: number;
  readonly stageMs: number;
  readonly cooperative: boolean;
}

export interface SpinReport {
  readonly sliceCount: number;
  readonly elapsedMs: number;
}

function sliceCount(args: SpinArgs): number {
  return Math.max(1, Math.ceil(args.ms / args.stageMs));
}

/** The slice loop, synchronous: `checkpoint` runs before each slice when cooperative (it throws to stop). */
export function spinSync(args: SpinArgs, checkpoint: () => void): SpinReport {
  const slices = sliceCount(args);
  const started = performance.now();
  for (let i = 0; i < slices; i++) {
    if (args.cooperative) checkpoint();
    burn(Math.min(args.stageMs, args.ms - i * args.stageMs));
  }
  return { sliceCount: slices, elapsedMs: performance.now() - started };
}

/** The same loop, yielding to the event loop before each slice so an abort signal can fire. */
export async function spinYielding(args: SpinArgs, checkpoint: () => void): Promise<SpinReport> {
  const slices = sliceCount(args);
  const started = performance.now();
  for (let i = 0; i < slices; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (args.cooperative) checkpoint();
    burn(Math.min(args.stageMs, args.ms - i * args.stageMs));
  }
  return { sliceCount: slices, elapsedMs: performance.now() - started };
}

/** The tool result, shaped like the built-in spin's `report` stage. */
export function spinResult(r: SpinReport): CallToolResult {
  return {
    content: [{ type: 'text', text: `spun ${r.sliceCount} slices in ${r.elapsedMs.toFixed(1)} ms` }],
    structuredContent: { ...r },
  };
}
