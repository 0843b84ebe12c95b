/** Baseline (c)'s workerpool worker: the spin body, registered as a method. */
import workerpool from 'workerpool';
import { spinResult, spinSync, type SpinArgs } from './spin-body.js';

workerpool.worker({
  spin: (args: SpinArgs) => spinResult(spinSync(args, () => undefined)),
});
