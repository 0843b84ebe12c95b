/**
 * The job state machine. One Int32 word per job lives in a SharedArrayBuffer
 * so the main thread and the worker decide every race with one
 * `Atomics.compareExchange`:
 *
 * ```
 *   queued ──start──▶ running ──completion wins (worker)──▶ responding ──▶ completed | failed
 *     │                  │
 *     │                  ├──cancel wins (main)────────────▶ cancelled   (nothing is ever sent)
 *     │                  └──deadline wins (main)──────────▶ timedOut    (an error is owed)
 *     └──cancel wins (main)──────────────────────────────▶ cancelled
 * ```
 *
 * Only one transition out of `queued` or `running` can succeed. A word packs
 * the state (low 3 bits) with the slot's generation (the rest), so a stale
 * worker that still holds an old generation can never win a CAS on a slot that
 * has since been reused by another job.
 *
 * This file is imported by both sides: the {@link StateSlab} (main thread) and
 * the worker-side helpers at the bottom.
 */

/** Every state a job can be in. `free` marks an unused slot. */
export const JobState = {
  free: 0,
  queued: 1,
  running: 2,
  responding: 3,
  completed: 4,
  cancelled: 5,
  timedOut: 6,
  /** Answered with an error (stage failure, crash, bad arguments, full queue). */
  failed: 7,
} as const;

/** A state name. */
export type JobStateName = keyof typeof JobState;
/** A state's numeric code as stored in the low bits of the word. */
export type JobStateCode = (typeof JobState)[JobStateName];

/**
 * The edges of the drawing above, and who takes each: the only moves {@link StateSlab.transition} (and the worker's
 * {@link claimResponse}) make. `free` is no state of a job: a slot enters `queued` when allocated and leaves any
 * state when released.
 */
export const JOB_EDGES = [
  { from: 'queued', to: 'running', by: 'main: a thread takes the job' },
  { from: 'queued', to: 'cancelled', by: 'main: a cancel wins while queued' },
  { from: 'running', to: 'responding', by: 'worker: completion wins (or main, for a worker that died)' },
  { from: 'running', to: 'cancelled', by: 'main: a cancel wins while running' },
  { from: 'running', to: 'timedOut', by: 'main: the deadline wins' },
  { from: 'responding', to: 'completed', by: 'main: the result is answered' },
  { from: 'responding', to: 'failed', by: 'main: the answer is an error' },
] as const satisfies readonly { from: JobStateName; to: JobStateName; by: string }[];

/** Per state code, a bit per state code it may move to ({@link JOB_EDGES}): one load and one AND per transition. */
const MAY_MOVE: readonly number[] = (() => {
  const masks: number[] = new Array<number>(8).fill(0);
  for (const e of JOB_EDGES) masks[JobState[e.from]]! |= 1 << JobState[e.to];
  return masks;
})();

/** Whether `from → to` is an edge of {@link JOB_EDGES}. */
export function isJobEdge(from: JobStateCode, to: JobStateCode): boolean {
  return ((MAY_MOVE[from] ?? 0) & (1 << to)) !== 0;
}

const STATE_BITS = 3;
const STATE_MASK = (1 << STATE_BITS) - 1;
/** Generations wrap within 28 bits so a word stays a positive int32. */
const GENERATION_MASK = (1 << 28) - 1;

const NAMES: readonly JobStateName[] = [
  'free',
  'queued',
  'running',
  'responding',
  'completed',
  'cancelled',
  'timedOut',
  'failed',
];

/** Packs a generation and a state into one word. */
export function word(generation: number, state: JobStateCode): number {
  return (generation << STATE_BITS) | state;
}

/** The state part of a word. */
export function stateOf(w: number): JobStateCode {
  return (w & STATE_MASK) as JobStateCode;
}

/** The human name of a word's state. */
export function stateName(w: number): JobStateName {
  return NAMES[stateOf(w)] ?? 'free';
}

/** Where one job's word lives: the slot index and the generation it was handed. */
export interface SlotRef {
  /** Index of the Int32 word in the slab. */
  readonly index: number;
  /** Generation stamped into the word when the slot was allocated. */
  readonly generation: number;
}

/** A slot in one number, for the message to a worker: generation × capacity + index (exact below 2^53). */
export function packSlot(ref: SlotRef, capacity: number): number {
  return ref.generation * capacity + ref.index;
}

/**
 * The main thread's view of the shared state words: a fixed set of slots,
 * handed out to jobs and returned when the job has left the registry.
 */
export class StateSlab {
  /** The shared memory; hand it to workers once (workerData), not per task. */
  readonly buffer: SharedArrayBuffer;
  private readonly words: Int32Array;
  private readonly generations: Int32Array;
  private readonly freeSlots: number[] = [];

  /**
   * @param capacity how many jobs can hold a slot at once (queued + running +
   *   awaiting their response); allocation beyond it throws.
   */
  constructor(readonly capacity: number) {
    // Three regions of one word per slot: the state words, the generation a worker started, and that worker's threadId.
    this.buffer = new SharedArrayBuffer(3 * capacity * Int32Array.BYTES_PER_ELEMENT);
    this.words = new Int32Array(this.buffer);
    this.generations = new Int32Array(capacity);
    for (let i = capacity - 1; i >= 0; i--) this.freeSlots.push(i);
  }

  /** Slots not currently held by a job. */
  get available(): number {
    return this.freeSlots.length;
  }

  /** Takes a free slot and puts it in `queued` under a fresh generation. */
  allocate(): SlotRef {
    const index = this.freeSlots.pop();
    if (index === undefined) throw new Error('state slab exhausted');
    const generation = ((this.generations[index] ?? 0) + 1) & GENERATION_MASK;
    this.generations[index] = generation;
    Atomics.store(this.words, index, word(generation, JobState.queued));
    return { index, generation };
  }

  /** Returns a slot; its old generation can no longer win any transition. */
  release(ref: SlotRef): void {
    if (this.generations[ref.index] !== ref.generation) return; // already released and reused
    Atomics.store(this.words, ref.index, word(ref.generation, JobState.free));
    this.generations[ref.index] = (ref.generation + 1) & GENERATION_MASK;
    this.freeSlots.push(ref.index);
  }

  /** Whether a worker has begun running this job (its code is on a thread, not just handed to the pool). */
  started(ref: SlotRef): boolean {
    return Atomics.load(this.words, this.capacity + ref.index) === ref.generation;
  }

  /** The threadId of the worker that started this job (valid once {@link started} is true). */
  threadOf(ref: SlotRef): number {
    return Atomics.load(this.words, 2 * this.capacity + ref.index);
  }

  /** The current state of a job (`free` if its slot moved on). */
  read(ref: SlotRef): JobStateName {
    const w = Atomics.load(this.words, ref.index);
    return w >> STATE_BITS === ref.generation ? stateName(w) : 'free';
  }

  /**
   * One atomic transition: succeeds only if the job is exactly in `from`,
   * and only along an edge of {@link JOB_EDGES} (any other move is refused).
   * A successful move out of `running` wakes the worker's waiter so its
   * AbortSignal fires without any polling.
   */
  transition(ref: SlotRef, from: JobStateCode, to: JobStateCode): boolean {
    if (!isJobEdge(from, to)) return false;
    const expected = word(ref.generation, from);
    const won = Atomics.compareExchange(this.words, ref.index, expected, word(ref.generation, to)) === expected;
    if (won && from === JobState.running) Atomics.notify(this.words, ref.index);
    return won;
  }

  /** Cancellation: queued or running → cancelled. Returns the state it won from, or undefined if it lost. */
  tryCancel(ref: SlotRef): 'queued' | 'running' | undefined {
    if (this.transition(ref, JobState.queued, JobState.cancelled)) return 'queued';
    if (this.transition(ref, JobState.running, JobState.cancelled)) return 'running';
    return undefined;
  }
}

// ---- worker side -------------------------------------------------------

/** What a worker holds for the job it runs. */
export interface WorkerSlot {
  readonly words: Int32Array;
  readonly index: number;
  /** The exact word that means "this job, still running". */
  readonly runningWord: number;
}

/**
 * Unpacks a {@link packSlot} number and records which worker has begun the
 * job (so a hard stop can find its thread). Fills `into` (the worker's job
 * context is its slot) rather than allocating.
 */
export function startSlot<T extends { -readonly [K in keyof WorkerSlot]: WorkerSlot[K] }>(
  into: T,
  words: Int32Array,
  packed: number,
  threadId: number,
): T {
  const capacity = words.length / 3;
  const index = packed % capacity;
  const generation = (packed - index) / capacity;
  Atomics.store(words, 2 * capacity + index, threadId);
  Atomics.store(words, capacity + index, generation);
  into.words = words;
  into.index = index;
  into.runningWord = word(generation, JobState.running);
  return into;
}

/** True while nobody has stopped the job. A single atomic load: cheap enough for inner loops. */
export function stillRunning(slot: WorkerSlot): boolean {
  return Atomics.load(slot.words, slot.index) === slot.runningWord;
}

/**
 * Completion's side of the race, run in the worker before it hands anything
 * back: running → responding. False means cancellation (or the deadline) won
 * and whatever the job produced must be discarded. `hasWaiter: false` skips
 * the wake-up when the job never made a {@link leftRunning} waiter.
 */
export function claimResponse(slot: WorkerSlot, hasWaiter = true): boolean {
  const responding = (slot.runningWord & ~STATE_MASK) | JobState.responding;
  const won = Atomics.compareExchange(slot.words, slot.index, slot.runningWord, responding) === slot.runningWord;
  if (won && hasWaiter) Atomics.notify(slot.words, slot.index); // releases this job's own waiter
  return won;
}

/**
 * Resolves once the job leaves `running` for any reason. Uses
 * `Atomics.waitAsync`, so the worker's event loop is woken by the main
 * thread's `Atomics.notify`, with no timer and no message.
 */
export async function leftRunning(slot: WorkerSlot): Promise<void> {
  for (;;) {
    const waited = Atomics.waitAsync(slot.words, slot.index, slot.runningWord);
    if (waited.async) await waited.value;
    if (!stillRunning(slot)) return;
  }
}
