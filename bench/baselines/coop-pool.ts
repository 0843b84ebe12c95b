/**
 * What the cooperative baselines (e) and (g) share, so that they differ only
 * in the SDK line in front: Piscina running (e)'s worker file, and one Int32
 * flag per call in a SharedArrayBuffer shared with every worker. The call's
 * abort signal sets the flag; the worker checks it between slices and
 * leaves. No registry, no admission queue, no state machine, no escalation:
 * Piscina's own queue holds what waits, and a worker that ignores the flag is
 * never stopped.
 */
import { Piscina } from 'piscina';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';
import type { CoopTask } from './piscina-coop-worker.js';

/** More flags than calls can ever be in flight at once in the bench. */
const FLAGS = 4096;

export interface CoopPool {
  /** Runs `spin` on a worker under a fresh flag that `signal`'s abort sets; a call whose worker left on the flag rejects and counts as stopped. */
  run(args: SpinArgs, signal: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * `countCancels`: the abort counts in `counters.cancelledCalls` ((g); (e)'s
 * `serveBaseline` counts the `notifications/cancelled` it reads instead).
 */
export function coopPool(name: string, threads: number, counters: BaselineCounters, countCancels = false): CoopPool {
  const flags = new Int32Array(new SharedArrayBuffer(FLAGS * Int32Array.BYTES_PER_ELEMENT));
  const free: number[] = Array.from({ length: FLAGS }, (_, i) => FLAGS - 1 - i);
  const pool = new Piscina<CoopTask, CallToolResult>({
    filename: new URL('./piscina-coop-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    workerData: flags.buffer,
  });
  pool.on('error', (e: unknown) => process.stderr.write(`[${name}] pool error: ${String(e)}\n`));
  return {
    async run(args, signal) {
      const slot = free.pop();
      if (slot === undefined) throw new Error('too many calls in flight');
      Atomics.store(flags, slot, 0);
      const abort = () => {
        if (countCancels) counters.cancelledCalls++;
        Atomics.store(flags, slot, 1);
      };
      signal.addEventListener('abort', abort, { once: true });
      try {
        return await pool.run({ args, slot });
      } catch (error) {
        if (signal.aborted) counters.stopped++; // the worker saw the flag and left
        throw error;
      } finally {
        signal.removeEventListener('abort', abort);
        free.push(slot);
      }
    },
    close: () => pool.close({ force: true }),
  };
}
