/** Baseline (b)'s Piscina worker: the spin body with no way to see a cancellation (the main thread terminates the worker instead). */
import { spinResult, spinSync, type SpinArgs } from './spin-body.js';

export default function spin(args: SpinArgs) {
  return spinResult(spinSync(args, () => undefined));
}
