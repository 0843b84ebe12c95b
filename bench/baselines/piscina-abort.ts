/**
 * Baseline (b): the SDK with Piscina, passing the SDK's `extra.signal` to
 * `piscina.run`. Aborting a running task makes Piscina terminate its worker
 * and start a replacement; a queued task is just dropped. This is what
 * people write by hand today.
 */
import { Piscina } from 'piscina';
import { serveBaseline, threadsArg, type BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';

const threads = threadsArg();
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const pool = new Piscina<SpinArgs, unknown>({
  filename: new URL('./piscina-worker.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.POSITIVE_INFINITY,
});
// Piscina destroys (terminates) a worker only when a running task is aborted, or when the pool closes.
pool.on('workerDestroy', () => counters.stopped++);
pool.on('error', (e: unknown) => process.stderr.write(`[baseline-piscina] pool error: ${String(e)}\n`));

await serveBaseline({
  name: 'baseline-piscina-abort',
  counters,
  run: (args, extra) => pool.run(args, { signal: extra.signal }) as Promise<never>,
  close: () => pool.close({ force: true }),
});
