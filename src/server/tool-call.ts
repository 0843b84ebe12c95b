/**
 * One inbound request of a connection, from its arrival at the guard until
 * its answer left (or was dropped). What kind of call it is is decided once,
 * at admission ({@link CallKind}); where its request is in its life is one
 * tagged {@link CallPhase}, moved only along {@link CALL_EDGES}:
 *
 * ```
 *            ┌── early cancel (windowed: its job does not exist yet) ──┐
 *            ▼                                                         │
 *   reserved{job?, resume?, early?} ─────────────────────────────────┘
 *     │  │  └──detach (answered as a task at once)──────────────▶ detached
 *     │  └──leave (answered before its handler ran: refused)─────────────────▶ gone
 *     └──begin (the handler starts, begins or resumes the job)──▶ running{job}
 *   running{job} ──detach (became a task, parked for input, retry refused)──▶ detached
 *   detached ──reattach (the task store refused the task: answered directly)──▶ running{job}
 *   running{job} ──settle (the handler settled)──▶ settled{job, silent}
 *   running | detached | settled ──leave (its answer left, or the settle macrotask)──▶ gone
 * ```
 *
 * The job's own state (queued, running, responding, cancelled, …) is the
 * job's (`CallHandle.state`, decided by its CAS); a phase says only which job
 * the request leads to, so a cancel of the request reaches that job, and
 * nothing else. `silent`: the handler rejected on purpose because its job was
 * cancelled; the SDK's answer to that rejection is dropped without counting.
 */
import type { CallHandle } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import type { CancelSource } from '../state/cancel-source.js';

/**
 * What a request is, decided once at admission. `plain`: a pooled call
 * reserved under the request's own id (a pooled request of another method
 * would be one too). `task`: answered at once with a task (2025
 * task-augmented, or 2026 `required`, or `optional` with no window).
 * `windowed`: 2026 `optional` with the tasks extension: begun by the task
 * runner, answered directly or as a task. `rounds`: 2026 multi-round-trip
 * (a tool that may ask the client, or a retry of one). `unpooled`: a request
 * the SDK answers without the pool (`tools/list`, `tasks/get`, …).
 */
export type CallKind = 'plain' | 'task' | 'windowed' | 'rounds' | 'unpooled';

/** The protocol revision a request came in: `legacy` 2025 (no envelope), `modern` 2026-07-28. */
export type CallEra = 'legacy' | 'modern';

/** A cancel that came before a windowed call's job began: applied, with its own source, as it begins. */
export interface EarlyCancel {
  readonly reason: string | undefined;
  readonly source: CancelSource;
}

/** Where one request is; see the module's drawing. `R`: what a retry's parked call is (./call-rounds.ts's `Resume`). */
export type CallPhase<R = unknown> =
  | {
      readonly phase: 'reserved';
      /** The reservation a cancel reaches (none for a task, a windowed call or an unpooled request). */
      readonly job: CallHandle | undefined;
      /** A 2026 retry's parked call, matched at the door, until its handler resumes it. */
      readonly resume?: R;
      readonly early?: EarlyCancel;
    }
  | { readonly phase: 'running'; readonly job: CallHandle }
  | { readonly phase: 'detached' }
  | { readonly phase: 'settled'; readonly job: CallHandle; readonly silent: boolean }
  | { readonly phase: 'gone' };

export type PhaseName = CallPhase['phase'];

/** One edge of the drawing: the move a method makes. */
export interface CallEdge {
  readonly from: PhaseName;
  readonly to: PhaseName;
  readonly on: 'early cancel' | 'begin' | 'detach' | 'reattach' | 'settle' | 'leave';
}

/** Every move a request's phase may make; {@link ToolCall} refuses any other. */
export const CALL_EDGES: readonly CallEdge[] = [
  { from: 'reserved', to: 'reserved', on: 'early cancel' },
  { from: 'reserved', to: 'running', on: 'begin' },
  { from: 'reserved', to: 'detached', on: 'detach' },
  { from: 'reserved', to: 'gone', on: 'leave' },
  { from: 'running', to: 'detached', on: 'detach' },
  { from: 'detached', to: 'running', on: 'reattach' },
  { from: 'running', to: 'settled', on: 'settle' },
  { from: 'running', to: 'gone', on: 'leave' },
  { from: 'detached', to: 'gone', on: 'leave' },
  { from: 'settled', to: 'gone', on: 'leave' },
];

/** Whether `from → to` by `on` is an edge of {@link CALL_EDGES}. */
export function isCallEdge(from: PhaseName, to: PhaseName, on: CallEdge['on']): boolean {
  return CALL_EDGES.some((e) => e.from === from && e.to === to && e.on === on);
}

/** One request of a connection; see the module comment. */
export class ToolCall<R = unknown> {
  private current: CallPhase<R>;

  constructor(
    readonly id: RequestId,
    readonly kind: CallKind,
    readonly era: CallEra,
    reserved: { readonly job?: CallHandle; readonly resume?: R } = {},
    /** The error its handler answers with before starting anything (the tool's task support refuses the call). */
    readonly refusal?: Error,
  ) {
    this.current = {
      phase: 'reserved',
      job: reserved.job,
      ...(reserved.resume !== undefined && { resume: reserved.resume }),
    };
  }

  get phase(): CallPhase<R> {
    return this.current;
  }

  /** The job a cancel of this request reaches now, if it leads to one. */
  get job(): CallHandle | undefined {
    const c = this.current;
    return c.phase === 'reserved' || c.phase === 'running' || c.phase === 'settled' ? c.job : undefined;
  }

  /** The retry's parked call, while it waits for its handler. */
  get resume(): R | undefined {
    return this.current.phase === 'reserved' ? this.current.resume : undefined;
  }

  /**
   * reserved → reserved: a cancel before a windowed call's job exists is kept
   * (the first one), and applied as it begins. False if the call is past that.
   */
  keepEarlyCancel(cancel: EarlyCancel): boolean {
    const c = this.current;
    if (c.phase !== 'reserved' || this.kind !== 'windowed') return false;
    return this.move('reserved', 'early cancel', { ...c, early: c.early ?? cancel });
  }

  /** reserved → running{job}: the handler started it. Returns the cancel kept for it meanwhile, if any. */
  begin(job: CallHandle): EarlyCancel | undefined {
    const c = this.current;
    if (c.phase !== 'reserved') return undefined;
    this.move('running', 'begin', { phase: 'running', job });
    return c.early;
  }

  /** → detached: the request no longer leads to a job (`job`: only if it still leads to that one). */
  detach(job?: CallHandle): void {
    if (job !== undefined && this.current.phase === 'running' && this.current.job !== job) return;
    if (this.current.phase === 'detached' || this.current.phase === 'gone') return;
    this.move('detached', 'detach', { phase: 'detached' });
  }

  /** detached → running{job}: a windowed call stays direct after all. Nothing if its answer already left. */
  reattach(job: CallHandle): void {
    if (this.current.phase !== 'detached') return;
    this.move('running', 'reattach', { phase: 'running', job });
  }

  /** running → settled: the handler settled; false if it leads to no job any more (nothing to settle). */
  settle(silent: boolean): boolean {
    const c = this.current;
    if (c.phase !== 'running') return false;
    return this.move('settled', 'settle', { phase: 'settled', job: c.job, silent });
  }

  /** → gone: its answer left (or was dropped), or it was forgotten once settled. Returns the phase it left. */
  leave(): CallPhase<R> {
    const was = this.current;
    if (was.phase === 'gone') return was;
    this.move('gone', 'leave', { phase: 'gone' });
    return was;
  }

  /** The one place the phase changes: a pair the table lacks is refused (false), the phase kept. */
  private move(to: PhaseName, on: CallEdge['on'], next: CallPhase<R>): boolean {
    if (!isCallEdge(this.current.phase, to, on)) return false;
    this.current = next;
    return true;
  }
}
