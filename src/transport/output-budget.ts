/**
 * Bounded memory for answers nobody reads (issue 56), on every transport.
 * Each response stream (an HTTP response: a 2026 POST's, a 2025 POST's or a
 * 2025 session's GET stream; the stdout of a stdio connection) is watched
 * for the output it holds that its peer has not taken yet (its
 * `writableLength`: bytes the kernel's socket or pipe buffer could not take).
 * A stream whose peer takes nothing is *stalled*; two rules close stalled
 * streams, and closing one is treated like a cancel: the calls whose answers
 * would go there are cancelled through their compare-exchange (a 2026 closed
 * stream, a 2025 POST stream and a stdio connection already cancel what they
 * carry when they close) and what the stream held is freed.
 *
 * - Unread timeout: a stream holding output whose peer has taken none of it
 *   for `unreadTimeoutMs` is closed. (Its size is no guide: the SDK queues a
 *   2026 stream's messages ahead of the response while the response waits for
 *   'drain', out of sight.)
 * - Per stream: an HTTP response holding more than `perStreamBytes` whose
 *   peer took nothing for a second is closed. (A stdio connection stops
 *   reading requests at that bound instead: LineTransport.)
 * - In total: while all streams together hold more than `totalBytes`, the
 *   streams whose peer took nothing for a second are closed, the one
 *   stalled longest first, until the rest fit.
 *
 * A peer that reads is never stalled, so it receives answers larger than
 * either bound. After output nobody read (streams closed here, or more than
 * {@link RECLAIM_BYTES} unread at some look, or as many more bytes of
 * external memory held than the last collection left: the buffers of answers
 * the kernel took whole, which no look sees unread), once the streams are
 * gone and V8 holds as much more heap than the last collection left, a full garbage
 * collection is asked for (see {@link reclaimDecision}), once a second at most (and
 * once more while it shrinks the heap by as much): V8 does not shrink an idle
 * heap soon on its own, and the answers nobody read would keep the process
 * near its peak memory.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULTS } from '../defaults.js';

/** Options for {@link OutputBudget}. */
export interface OutputBudgetOptions {
  /**
   * Unread output an HTTP response may hold while its peer takes nothing (a second's grace).
   * @default 1 MiB (`--max-output-buffer-bytes`)
   */
  readonly perStreamBytes?: number;
  /**
   * Unread output all streams together may hold; past it stalled streams are closed.
   * @default 64 MiB
   */
  readonly totalBytes?: number;
  /**
   * How long a stream holding output may go without its peer taking a byte.
   * @default 30000
   */
  readonly unreadTimeoutMs?: number;
  /**
   * How often the streams are looked at, while any holds output.
   * @default 250
   */
  readonly checkMs?: number;
  /** Told of each stream closed, with why (the command line logs the first and then every hundredth). */
  readonly onClosed?: (why: string, closed: number) => void;
  /** Where the counters are kept, updated in place (the server's wire stats, so `executor://stats` shows them). */
  readonly counters?: OutputBudgetStats;
  /** Reads the heap V8 holds, in bytes (tests inject one; the real heap moves with whatever else the process does). */
  readonly heldHeap?: () => number;
  /** Reads the external memory V8 accounts for (buffers), in bytes; injectable as {@link heldHeap} is. */
  readonly heldExternal?: () => number;
}

/** A watched stream: what it holds unread, and how to close it (its close cancels what it carries). */
export interface WatchedStream {
  /** Bytes written to it that its peer has not taken yet. */
  unread(): number;
  /** Closes it; `why` says which bound. */
  close(why: string): void;
  /**
   * Closed as soon as it holds more than the per-stream bound and its peer
   * took nothing for a second (an HTTP response). Without it (a stdio
   * connection, which stops reading requests at that bound instead) only the
   * unread timeout and the total bound close it.
   */
  readonly capped?: boolean;
  /**
   * It calls {@link OutputBudget.wake} whenever a write leaves output unread (a stdio connection), so the budget's
   * timer may stop while it holds none: an idle server then never wakes for it. Without it (an HTTP response, watched
   * only while it is open) the timer runs as long as the stream is watched.
   */
  readonly wakes?: boolean;
}

interface Entry {
  readonly stream: WatchedStream;
  /** The unread bytes at the last look. */
  last: number;
  /** When its peer last took something (or it held nothing). */
  progressAt: number;
}

/** Counters of the budget (`executor://stats`). */
export interface OutputBudgetStats {
  /** Streams closed because their peer did not read what they held. */
  outputStreamsClosed: number;
  /** Unread output held by all streams at the last look, in bytes. */
  unreadOutputBytes: number;
}

/** Watches response streams and closes stalled ones; see the module comment. */
export class OutputBudget {
  readonly perStreamBytes: number;
  readonly totalBytes: number;
  readonly unreadTimeoutMs: number;
  private readonly checkMs: number;
  private readonly entries = new Set<Entry>();
  private timer: NodeJS.Timeout | undefined;
  private readonly counters: OutputBudgetStats;
  /** When the reclaim timer last did something (collected, or saw traffic): it fires once a second at most. */
  private reclaimAt = 0;
  private reclaimTimer: NodeJS.Timeout | undefined;
  /** The most unread output all streams held at one look since the last collection. */
  private unreadPeak = 0;
  /** A stream was watched since the reclaim timer was set: traffic goes on. */
  private watchedSince = false;
  /** Streams were closed here since the last collection. */
  private closedSince = false;
  /** Reads the heap V8 holds. */
  private readonly heldHeap: () => number;
  /** The heap V8 holds (committed) after the last collection (or at start). */
  private heapBase: number;
  /** Reads the external memory V8 accounts for. */
  private readonly heldExternal: () => number;
  /** The external memory after the last collection (or at start). */
  private externalBase: number;

  constructor(private readonly options: OutputBudgetOptions = {}) {
    this.heldHeap = options.heldHeap ?? heldHeap;
    this.heapBase = this.heldHeap();
    this.heldExternal = options.heldExternal ?? heldExternal;
    this.externalBase = this.heldExternal();
    this.perStreamBytes = options.perStreamBytes ?? DEFAULTS.maxOutputBufferBytes;
    this.totalBytes = options.totalBytes ?? DEFAULTS.maxUnreadOutputBytes;
    this.unreadTimeoutMs = options.unreadTimeoutMs ?? DEFAULTS.unreadTimeoutMs;
    this.checkMs = options.checkMs ?? 250;
    this.counters = options.counters ?? { outputStreamsClosed: 0, unreadOutputBytes: 0 };
    for (const [name, v] of [
      ['perStreamBytes', this.perStreamBytes],
      ['totalBytes', this.totalBytes],
      ['unreadTimeoutMs', this.unreadTimeoutMs],
      ['checkMs', this.checkMs],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer (got ${v})`);
    }
  }

  /** Watches `stream` until the returned function is called (its end: finished or closed). */
  watch(stream: WatchedStream): () => void {
    const entry: Entry = { stream, last: 0, progressAt: Date.now() };
    this.entries.add(entry);
    this.watchedSince = true;
    this.arm();
    return () => {
      if (this.entries.delete(entry)) this.reclaimSoon();
    };
  }

  stats(): OutputBudgetStats {
    return {
      outputStreamsClosed: this.counters.outputStreamsClosed,
      unreadOutputBytes: this.counters.unreadOutputBytes,
    };
  }

  /** A watched stream that {@link WatchedStream.wakes} holds output again: look at the streams until none does. */
  wake(): void {
    if (this.entries.size > 0) this.arm();
  }

  /** Looks at every stream once; runs on the timer. */
  check(now = Date.now()): void {
    let total = 0;
    let mustLook = false;
    const stalled: Entry[] = [];
    for (const e of this.entries) {
      const unread = e.stream.unread();
      if (unread > 0 || e.stream.wakes !== true) mustLook = true;
      if (unread === 0 || unread < e.last) e.progressAt = now;
      e.last = unread;
      // Stalled this long: it holds output and its peer took none of it meanwhile.
      const stalledFor = unread > 0 ? now - e.progressAt : 0;
      if (stalledFor >= this.unreadTimeoutMs) this.closeStream(e, `its output unread for ${this.unreadTimeoutMs} ms`);
      else if (e.stream.capped && unread > this.perStreamBytes && stalledFor >= STALL_MS)
        this.closeStream(e, `more than ${this.perStreamBytes} bytes of its output unread`);
      else {
        total += unread;
        // A reader is given a second to start on what it was sent before it counts as stalled.
        if (stalledFor >= STALL_MS) stalled.push(e);
      }
    }
    if (total > this.totalBytes) {
      // Longest stalled first; a stream whose peer reads is never among them.
      stalled.sort((a, b) => a.progressAt - b.progressAt);
      for (const e of stalled) {
        if (total <= this.totalBytes) break;
        total -= e.last;
        this.closeStream(
          e,
          `all streams together held more than ${this.totalBytes} bytes of unread output, this one unread`,
        );
      }
    }
    this.counters.unreadOutputBytes = total;
    if (total > this.unreadPeak) this.unreadPeak = total;
    // Nothing held anywhere and every stream left wakes us when it holds output again: sleep (an idle server stays idle).
    if (this.entries.size === 0 || !mustLook) this.disarm();
  }

  /** Stops the timers (the streams close with their server). */
  close(): void {
    this.disarm();
    clearTimeout(this.reclaimTimer);
    this.entries.clear();
  }

  private closeStream(e: Entry, why: string): void {
    this.entries.delete(e);
    this.counters.outputStreamsClosed++;
    this.options.onClosed?.(why, this.counters.outputStreamsClosed);
    e.stream.close(why);
    this.closedSince = true;
    this.reclaimSoon();
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.checkMs);
    this.timer.unref();
  }

  private disarm(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A look soon (once a second at most) at whether a full collection would give memory back; see the module comment. */
  private reclaimSoon(again = false): void {
    if (this.reclaimTimer) return;
    this.watchedSince = false;
    const wait = Math.max(100, this.reclaimAt + 1000 - Date.now());
    this.reclaimTimer = setTimeout(() => {
      this.reclaimTimer = undefined;
      const decision = reclaimDecision({
        open: this.entries.size,
        watchedSince: this.watchedSince,
        closedSince: this.closedSince,
        unreadPeak: this.unreadPeak,
        again,
        heapBase: this.heapBase,
        held: this.heldHeap,
        externalBase: this.externalBase,
        external: this.heldExternal,
      });
      if (decision === 'later') {
        this.reclaimAt = Date.now();
        return this.reclaimSoon(again);
      }
      if (decision === 'no') return;
      const held = this.heldHeap();
      this.reclaimAt = Date.now();
      this.closedSince = false;
      this.unreadPeak = 0;
      fullGc()();
      this.heapBase = this.heldHeap();
      this.externalBase = this.heldExternal();
      // V8 gives a large heap back over more than one collection: one more while it shrinks.
      if (held - this.heapBase >= RECLAIM_BYTES) this.reclaimSoon(true);
    }, wait);
    this.reclaimTimer.unref();
  }
}

/** What V8 holds, not what is in use: it keeps the pages of an emptied heap until a collection shrinks it. */
function heldHeap(): number {
  return getHeapStatistics().total_heap_size;
}

/**
 * Buffers V8 accounts for outside its heap. A 1 MB answer fits in a loopback socket's kernel buffers, so its
 * stream never holds it unread; the buffer it was written from waits for a collection, and Node 26's V8 does
 * not collect an idle heap for it (Node 20's did): 100 such answers kept the server 200 MB above its start.
 */
function heldExternal(): number {
  return getHeapStatistics().external_memory;
}

/** What {@link reclaimDecision} weighs when the reclaim timer fires. */
export interface ReclaimState {
  /** Streams watched now. */
  readonly open: number;
  /** Whether a stream was watched since the timer was set. */
  readonly watchedSince: boolean;
  /** Whether the budget closed streams since the last collection. */
  readonly closedSince: boolean;
  /** The most unread output all streams held at one look since the last collection, in bytes. */
  readonly unreadPeak: number;
  /** A second collection while the heap shrinks (no heap check). */
  readonly again: boolean;
  /** The heap held after the last collection. */
  readonly heapBase: number;
  /** The heap held now (read only when it matters). */
  readonly held: () => number;
  /** The external memory held after the last collection. */
  readonly externalBase: number;
  /** The external memory held now. */
  readonly external: () => number;
}

/**
 * Whether to force a full collection now (`collect`), look again in a second (`later`: requests came and went since
 * the timer was set, so the traffic goes on), or not at all (`no`). Only answers nobody read are worth it: streams
 * the budget closed, or unread output past {@link RECLAIM_BYTES} at some look. Answers that were read leave garbage
 * V8 collects as it allocates, and a forced collection throws away the optimized code that held on to dead request
 * objects, which V8 then compiles again: forced whenever the streams were gone, it doubled the server's CPU per
 * zero-work call over HTTP, under traffic and after every pause (issue 53's profile: 394 "weak objects"
 * deoptimizations in 4 s, none for the SDK's own server).
 */
export function reclaimDecision(s: ReclaimState): 'collect' | 'later' | 'no' {
  // Answers written out whole leave their buffers behind (see heldExternal); zero-work calls leave none.
  const externalGrown = s.external() >= s.externalBase + RECLAIM_BYTES;
  if (!s.closedSince) {
    // (A second collection, while the heap still shrinks, follows one that was worth it.)
    if (s.unreadPeak < RECLAIM_BYTES && !s.again && !externalGrown) return 'no';
    // Streams still open: the traffic goes on; the last one to end sets the timer again.
    if (s.open > 0) return 'no';
    if (s.watchedSince) return 'later';
  }
  return s.again || externalGrown || s.held() >= s.heapBase + RECLAIM_BYTES ? 'collect' : 'no';
}

/** Garbage beyond the last collection's live heap worth a full collection once the streams are gone. */
const RECLAIM_BYTES = 16 * 1024 * 1024;

/** How long a stream holding output must go without its peer taking any to count as stalled for the total bound. */
const STALL_MS = 1000;

let gc: (() => void) | undefined;
/** V8's full collection: the global `gc` when node runs with --expose-gc, else the same function exposed for a fresh context. */
function fullGc(): () => void {
  if (gc) return gc;
  const global = (globalThis as { gc?: () => void }).gc;
  if (global) return (gc = global);
  setFlagsFromString('--expose-gc');
  gc = runInNewContext('gc') as () => void;
  return gc;
}
