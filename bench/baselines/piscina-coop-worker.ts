/** Baseline (e)'s Piscina worker: the spin body, checking the call's shared flag before each slice. */
import { workerData } from 'node:worker_threads';
import { spinResult, spinSync, type SpinArgs } from './spin-body.js';

export interface CoopTask {
  readonly args: SpinArgs;
  /** Index of this call's flag: non-zero means cancelled. */
  readonly slot: number;
}

const flags = new Int32Array(workerData as SharedArrayBuffer);

/** A cancelled call throws: the main thread sees the rejection and answers nothing. */
export default function spin(task: CoopTask) {
  return spinResult(
    spinSync(task.args, () => {
      if (Atomics.load(flags, task.slot) !== 0) throw new Error('cancelled');
    }),
  );
}
