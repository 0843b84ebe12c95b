/**
 * The front end's remote call as a state machine on its own, as
 * src/remote/host/host-job.ts is the host's: the tagged {@link FrontState}
 * and one guarded method per transition of its table
 * ({@link FRONT_EDGES}, drawn in src/remote/lua/call-states.ts). Each
 * method moves only from the states its edge starts at and says whether it
 * moved; the Redis I/O, the asks and the tracing stay in remote-call.ts,
 * which changes its state only through these.
 */
import type { CancelResult, JobOutcome } from '../../backend/backend.js';
import { FRONT_EDGES, type FrontState, type FrontStateName, type Submission } from '../lua/call-states.js';

/** Whether `from → to` is an edge of {@link FRONT_EDGES}. */
export function isFrontEdge(from: FrontStateName, to: FrontStateName): boolean {
  return FRONT_EDGES[from].includes(to);
}

/** One call's state; see the module comment. */
export class FrontCallState {
  private current: FrontState = { kind: 'reserved' };

  get state(): FrontState {
    return this.current;
  }

  /** reserved → submitting: the job is being written to Redis. */
  submit(job: Submission): boolean {
    return this.current.kind === 'reserved' && this.move({ kind: 'submitting', job });
  }

  /** reserved → running: an adopted job (a 2026 retry took over a job parked by another front end) runs on its host. */
  adopted(job: Submission): boolean {
    return this.current.kind === 'reserved' && this.move({ kind: 'running', job, host: '' });
  }

  /** submitting → queued: this call's job (`job`, not an older one) reached Redis. */
  added(job: Submission): boolean {
    const s = this.current;
    return s.kind === 'submitting' && s.job === job && this.move({ kind: 'queued', job });
  }

  /** submitting | queued → running: a host took the job (its take message, a report or an ask came). */
  taken(host = ''): boolean {
    const s = this.current;
    return (s.kind === 'submitting' || s.kind === 'queued') && this.move({ kind: 'running', job: s.job, host });
  }

  /**
   * queued | running → running: the sweep found the job running on `host` (with no live host since
   * `hostlessSince`, if given). A queued job seen so is taken.
   */
  seen(host: string, hostlessSince?: number): boolean {
    const s = this.current;
    if (s.kind !== 'queued' && s.kind !== 'running') return false;
    return this.move({ kind: 'running', job: s.job, host, ...(hostlessSince !== undefined && { hostlessSince }) });
  }

  /** submitting | queued | running → cancelling: a cancel was asked; `decision` is its one answer. */
  cancelling(decision: Promise<CancelResult>): boolean {
    const s = this.current;
    if (s.kind !== 'submitting' && s.kind !== 'queued' && s.kind !== 'running') return false;
    const from = s.kind === 'running' ? 'running' : 'queued';
    return this.move({ kind: 'cancelling', job: s.job, from, decision });
  }

  /** anything but settled → settled{outcome}. Returns the state it left, or undefined if it was settled already. */
  settle(outcome: JobOutcome): Exclude<FrontState, { kind: 'settled' }> | undefined {
    const s = this.current;
    if (s.kind === 'settled' || !this.move({ kind: 'settled', outcome })) return undefined;
    return s;
  }

  private move(to: FrontState): boolean {
    if (!isFrontEdge(this.current.kind, to.kind)) return false;
    this.current = to;
    return true;
  }
}
