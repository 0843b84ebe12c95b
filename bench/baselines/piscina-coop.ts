/**
 * Baseline (e): the minimal cooperative design, what a competent person
 * writes with the SDK and Piscina. One Int32 flag per call in a
 * SharedArrayBuffer shared with every worker: the request's abort signal
 * sets it, the worker checks it between slices and leaves. No registry, no
 * admission queue, no state machine, no escalation: Piscina's own queue holds
 * what waits. It never stops a worker that ignores the flag.
 */
import { Piscina } from 'piscina';
import { serveBaseline, threadsArg, type BaselineCounters } from './common.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SpinArgs } from './spin-body.js';
import type { CoopTask } from './piscina-coop-worker.js';

const threads = threadsArg();
/** More flags than calls can ever be in flight at once in the bench. */
const FLAGS = 4096;
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const flags = new Int32Array(new SharedArrayBuffer(FLAGS * Int32Array.BYTES_PER_ELEMENT));
const free: number[] = Array.from({ length: FLAGS }, (_, i) => FLAGS - 1 - i);
const pool = new Piscina<CoopTask, unknown>({
  filename: new URL('./piscina-coop-worker.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.POSITIVE_INFINITY,
  workerData: flags.buffer,
});
pool.on('error', (e: unknown) => process.stderr.write(`[baseline-piscina-coop] pool error: ${String(e)}\n`));

await serveBaseline({
  name: 'baseline-piscina-coop',
  counters,
  run: async (args: SpinArgs, extra) => {
    const slot = free.pop();
    if (slot === undefined) throw new Error('too many calls in flight');
    Atomics.store(flags, slot, 0);
    const abort = () => Atomics.store(flags, slot, 1);
    extra.signal.addEventListener('abort', abort, { once: true });
    try {
      return (await pool.run({ args, slot })) as CallToolResult;
    } catch (error) {
      if (extra.signal.aborted) counters.stopped++; // the worker saw the flag and left
      throw error;
    } finally {
      extra.signal.removeEventListener('abort', abort);
      free.push(slot);
    }
  },
  close: () => pool.close({ force: true }),
});
