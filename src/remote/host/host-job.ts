/**
 * One job on a worker host, from the moment BullMQ hands it over until the
 * host is done with it. Its life is one discriminated {@link HostJobState}:
 *
 * ```
 *   taking ──take wins (Redis: queued|running → running, this token)──▶ running{local job}
 *     │   (a stop asked meanwhile is kept, and wins once the take returns)      │
 *     └──take loses (cancelled, gone, orphan, done elsewhere)──▶ settled{skipped}
 *   running ──local outcome, then respond (Redis: running → responding)──▶ settled{answered | dropped}
 *   running ──stop (a cancel message, or the once-a-second check: cancelled, gone, retaken, orphan)
 *           ──local CAS won──▶ stopping ──its thread is back──▶ settled{stopped}
 * ```
 *
 * A stop that reaches a job still being taken is never dropped: the take
 * returns into `stopping`, not `running`, so a cancel that won in Redis
 * before or during the take stops the job before it runs.
 */
import type { CallHandle, JobOutcome } from '../../backend/backend.js';
import type { CancelSource } from '../../state/cancel-source.js';

/** Where a host's job is. */
export type HostJobState =
  | { readonly kind: 'taking'; readonly stop?: string }
  | { readonly kind: 'running'; readonly local: LocalJob }
  | { readonly kind: 'stopping'; readonly local: LocalJob | undefined; readonly why: string }
  | { readonly kind: 'settled'; readonly end: 'skipped' | 'answered' | 'dropped' | 'stopped' };

/** The local executor's job, as a host needs it: its outcome and the local CAS of a cancel. */
export interface LocalJob extends Pick<CallHandle, 'state'> {
  readonly outcome: Promise<JobOutcome>;
  /** The local state word's CAS: true if the cancel won there. `source` names who stopped it (for its span). */
  tryCancel(why: string, source: CancelSource): boolean;
}

export class HostJob {
  private current: HostJobState = { kind: 'taking' };
  /** Settles when the host's BullMQ slot can be given to the next job: the job answered, was dropped or skipped, or a stop won. */
  readonly released: Promise<void>;
  private release!: () => void;

  constructor(
    readonly jobId: string,
    readonly token: string,
    /** The front end that owns the job (a 2026 retry may move it: see ADOPT in ask-lua.ts). */
    public front: string,
  ) {
    this.released = new Promise((resolve) => (this.release = resolve));
  }

  get state(): HostJobState {
    return this.current;
  }

  /** taking → settled{skipped}: the take lost. */
  skipped(): void {
    this.settle('skipped');
  }

  /**
   * The take won. Returns false if a stop reached the job meanwhile (it is
   * now settled{stopped}: it never runs); true if it may run.
   */
  taken(): boolean {
    if (this.current.kind !== 'taking') return false;
    if (this.current.stop !== undefined) {
      this.settle('stopped');
      return false;
    }
    return true;
  }

  /** running with this local job. */
  running(local: LocalJob): void {
    if (this.current.kind !== 'taking') return;
    this.current = { kind: 'running', local };
  }

  /**
   * A stop: a cancel won in Redis, the front end is gone, the state is gone
   * or another host holds the job. True if it won here (the local CAS, or a
   * take still in flight); the BullMQ slot is released at once.
   */
  stop(why: string, source: CancelSource): boolean {
    const s = this.current;
    if (s.kind === 'taking') {
      if (s.stop === undefined) this.current = { kind: 'taking', stop: why };
      return true;
    }
    if (s.kind !== 'running' || !s.local.tryCancel(why, source)) return false;
    this.current = { kind: 'stopping', local: s.local, why };
    this.release();
    return true;
  }

  /** running → settled{answered|dropped}: the outcome was offered to Redis (respond) with this result. */
  responded(won: boolean): void {
    if (this.current.kind === 'running') this.settle(won ? 'answered' : 'dropped');
  }

  /** stopping → settled{stopped}: the stopped job's thread is back. */
  stopped(): void {
    if (this.current.kind === 'stopping') this.settle('stopped');
  }

  private settle(end: 'skipped' | 'answered' | 'dropped' | 'stopped'): void {
    this.current = { kind: 'settled', end };
    this.release();
  }
}
