/**
 * Baseline (c): the SDK with the `workerpool` package, cancelling with the
 * promise's `.cancel()` when the SDK aborts the request. workerpool then asks
 * the worker to clean up; a worker busy in synchronous code cannot answer,
 * so it is terminated after `workerTerminateTimeout` (default 1000 ms) or
 * when the task ends, whichever is first, and a new worker is started.
 * Defaults are kept: they are what a user of the package gets.
 */
import { fileURLToPath } from 'node:url';
import workerpool from 'workerpool';
import { serveBaseline, threadsArg, type BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';

const threads = threadsArg();
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const pool = workerpool.pool(fileURLToPath(new URL('./workerpool-worker.js', import.meta.url)), {
  minWorkers: threads,
  maxWorkers: threads,
  workerType: 'thread',
  // Called when a worker is terminated: after a cancel, that is when the cancelled work stops.
  onTerminateWorker: () => void counters.stopped++,
});

await serveBaseline({
  name: 'baseline-workerpool',
  counters,
  run: async (args: SpinArgs, extra) => {
    const task = pool.exec('spin', [args]);
    const cancel = () => void task.cancel();
    extra.signal.addEventListener('abort', cancel, { once: true });
    try {
      return (await task) as never;
    } finally {
      extra.signal.removeEventListener('abort', cancel);
    }
  },
  close: async () => void (await pool.terminate(true)),
});
