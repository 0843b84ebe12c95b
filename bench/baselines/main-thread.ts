/**
 * Baseline (a): an SDK server that runs `spin` on its own main thread and
 * checks the request's abort signal between slices.
 *
 * As usually written, the loop is synchronous: the signal can only fire when
 * the event loop runs, which it does not until the loop ends, so the check
 * never sees a cancellation and the server answers nothing (not even ping)
 * for the whole run. `--yield` awaits setImmediate before each slice, the
 * fix people reach for: then cancellation and pings get in between slices.
 */
import { flag, serveBaseline, type BaselineCounters } from './common.js';
import { spinResult, spinSync, spinYielding } from './spin-body.js';

class Aborted extends Error {}

const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const yielding = flag('--yield');

await serveBaseline({
  name: yielding ? 'baseline-main-thread-yield' : 'baseline-main-thread',
  counters,
  run: async (args, extra) => {
    const checkpoint = () => {
      if (extra.signal.aborted) throw new Aborted();
    };
    // The synchronous loop has always ended (and answered) before the cancellation is read;
    // common.ts counts that stop when the cancellation arrives.
    try {
      return spinResult(yielding ? await spinYielding(args, checkpoint) : spinSync(args, checkpoint));
    } finally {
      if (extra.signal.aborted) counters.stopped++; // the yielding loop saw the cancellation and left
    }
  },
});
