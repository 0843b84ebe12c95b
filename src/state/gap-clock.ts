/**
 * The checkpoint-gap clock: how the worker measures, per call, the longest
 * time a stage went without a cancellation check, at no cost a hot loop can
 * feel. A checkpoint may not read a clock (`performance.now()` costs tens of
 * ns) or do an atomic operation more than it already does, so a ticker
 * thread (its own thread: the main thread's timers lag under load, and a
 * worker's own never fire while a stage runs) writes a coarse millisecond
 * clock into word 0 of a SharedArrayBuffer, and a checkpoint reads that word
 * plainly. Only when the value changed since the job's last check (about
 * once per tick) does the worker do more: subtract, take away the time its
 * thread waited for a core meanwhile (workers/run-delay.ts: on a loaded
 * machine that wait is the machine's, not the tool's), and keep the maximum.
 *
 * ```
 *   word 0                      the clock: ms the ticker has run, written every TICK_MS (each step ≤ MAX_STEP_MS)
 *   words 1 .. capacity         per slot: the worst gap (ms) of the job that last ended in it
 *   words 1+capacity .. 2×cap   per slot: the index of the stage that gap ended in
 * ```
 *
 * The worker writes a slot's two words when its job ends, before it hands
 * its outcome back; the main thread reads them when the outcome arrives (the
 * message orders the two), before the slot is released.
 */
import { Worker } from 'node:worker_threads';

/** How often the ticker writes the clock: the gaps' resolution. */
export const TICK_MS = 2;

/**
 * The most the clock moves in one tick. When the ticker itself is kept off a
 * core (a loaded machine), its clock stands still and then jumps, which would
 * blame a tool that checked all along for the ticker's stall: seen, 105 ms in
 * a loop of 10⁸ checks at load 5.6 on 2 cores. Clamped, the clock counts the
 * time the ticker ran; a stall of the tool's own thread still counts in full,
 * since the ticker runs on while it waits (a cancel then does wait that long).
 */
export const MAX_STEP_MS = 10;

/** The ticker's body: a CommonJS script run with `eval`, so it needs no file of its own next to the compiled code. */
const TICKER = `
const { workerData } = require('node:worker_threads');
const clock = new Int32Array(workerData.buffer, 0, 1);
const nap = new Int32Array(new SharedArrayBuffer(4));
let last = performance.now();
let ms = 0;
for (;;) {
  const now = performance.now();
  ms += Math.min(now - last, workerData.maxStepMs);
  last = now;
  Atomics.store(clock, 0, ms | 0);
  Atomics.wait(nap, 0, 0, workerData.tickMs);
}
`;

/** The main thread's side: the shared words and the ticker thread that writes the clock. */
export class GapClock {
  readonly buffer: SharedArrayBuffer;
  private readonly words: Int32Array;
  private readonly ticker: Worker;

  constructor(readonly capacity: number) {
    this.buffer = new SharedArrayBuffer((1 + 2 * capacity) * Int32Array.BYTES_PER_ELEMENT);
    this.words = new Int32Array(this.buffer);
    this.ticker = new Worker(TICKER, {
      eval: true,
      workerData: { buffer: this.buffer, tickMs: TICK_MS, maxStepMs: MAX_STEP_MS },
    });
    // It keeps no process alive, and a failure of its own (it has none to make) must not take the process down.
    this.ticker.unref();
    this.ticker.on('error', (error) => process.emitWarning(`checkpoint-gap clock: ${String(error)}`));
  }

  /** The worst gap (ms) and the stage index of the job that last ended in slot `index`. */
  read(index: number): { readonly ms: number; readonly stage: number } {
    return { ms: this.words[1 + index]!, stage: this.words[1 + this.capacity + index]! };
  }

  /** Stops the ticker. */
  close(): Promise<number> {
    return this.ticker.terminate();
  }
}

/** The worker's view: the clock word, and where a job's result goes. */
export interface GapWords {
  /** Word 0 is the clock; read it plainly. */
  readonly words: Int32Array;
  readonly capacity: number;
}

/**
 * The worker's view of a {@link GapClock} buffer; without one, a zeroed local
 * word (the clock never moves, so no gap is recorded, and writes to slots it
 * does not have are ignored).
 */
export function gapWords(buffer: SharedArrayBuffer | undefined): GapWords {
  if (!buffer) return { words: new Int32Array(1), capacity: 0 };
  const words = new Int32Array(buffer);
  return { words, capacity: (words.length - 1) / 2 };
}

/** Records a job's worst gap into its slot's words (worker side, once per job). */
export function writeGap(gaps: GapWords, index: number, ms: number, stage: number): void {
  if (gaps.capacity === 0) return;
  gaps.words[1 + index] = ms;
  gaps.words[1 + gaps.capacity + index] = stage;
}
