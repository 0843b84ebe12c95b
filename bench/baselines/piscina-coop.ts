/**
 * Baseline (e): the minimal cooperative design, what a competent person
 * writes with the SDK (1.32) and Piscina: one Int32 flag per call in a
 * SharedArrayBuffer, set by the request's abort signal and checked by the
 * worker between slices (./coop-pool.ts). Nothing else.
 */
import { serveBaseline, threadsArg, type BaselineCounters } from './common.js';
import { coopPool } from './coop-pool.js';

const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const pool = coopPool('baseline-piscina-coop', threadsArg(), counters);

await serveBaseline({
  name: 'baseline-piscina-coop',
  counters,
  run: (args, extra) => pool.run(args, extra.signal),
  close: () => pool.close(),
});
