/**
 * A running job's two timers: its deadline, and after a stop (cancel or
 * deadline) the grace period that ends in a hard stop, the one worker
 * terminated and replaced. Owned by one job; `clear` when it settles.
 */

/** What the escalation acts on. */
export interface EscalationTarget {
  /** The deadline passed: try to win `running → timedOut`. */
  onDeadline(): void;
  /** Whether the stopped job is on a thread (one still waiting for a replacement thread stops at its first check). */
  onThread(): boolean;
  /** Terminates the job's worker. */
  hardStop(): void;
}

export class Escalation {
  private deadline: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  private terminated = false;

  constructor(private readonly target: EscalationTarget) {}

  /** Whether the grace period ran out and the worker was terminated. */
  get hardStopped(): boolean {
    return this.terminated;
  }

  /** Arms the deadline; none for `undefined` or 0. */
  armDeadline(timeoutMs: number | undefined): void {
    if (timeoutMs === undefined || timeoutMs <= 0) return;
    this.deadline = setTimeout(() => this.target.onDeadline(), timeoutMs);
  }

  /** The job was stopped: it has `graceMs` to reach a checkpoint. */
  armGrace(graceMs: number): void {
    clearTimeout(this.deadline);
    this.grace = setTimeout(() => {
      if (!this.target.onThread()) return this.armGrace(graceMs);
      this.terminated = true;
      this.target.hardStop();
    }, graceMs);
  }

  clear(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.grace);
  }
}
