/**
 * A job's progress and log reports on the worker side. Throttling happens
 * here, not on the main thread: a stage calling `ctx.progress` in a hot loop
 * costs a clock read per call and one message per interval, not one message
 * per call. It also counts what it posted, so the main thread can hold the
 * outcome (which travels on Piscina's channel, not the job's port) until every
 * report sent before it has arrived.
 */
import type { MessagePort } from 'node:worker_threads';
import type { JobReports, ReportMessage } from '../src/pool/protocol.js';
import { ERROR_SEVERITY, type LoggingLevel } from '../src/stages/log-levels.js';
import { assertPlainJson } from './plain-json.js';

/** Log messages a job may send at once; after that, one per interval (per budget). */
export const LOG_BURST = 50;
/** Logs a job without a port may hold for its outcome. */
const TAIL_LIMIT = 2 * LOG_BURST;

/** A token bucket: `LOG_BURST` tokens, refilled at one per `intervalMs`. */
class Budget {
  private tokens = LOG_BURST;
  private at = performance.now();

  take(now: number, intervalMs: number): boolean {
    if (intervalMs > 0) this.tokens = Math.min(LOG_BURST, this.tokens + (now - this.at) / intervalMs);
    else this.tokens = LOG_BURST;
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }
}

export class Reporter {
  private posted = 0;
  private lastProgressAt = Number.NEGATIVE_INFINITY;
  /** The latest throttled progress, not yet posted (fields, not an object: a hot loop allocates nothing). */
  private hasPending = false;
  private pendingProgress = 0;
  private pendingTotal: number | undefined;
  private pendingMessage: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tail: ReportMessage[] | undefined;
  private logsDropped = 0;
  /** Below `error`, and `error` and above: chatty debug output cannot use up the budget of errors. */
  private routine: Budget | undefined;
  private severe: Budget | undefined;

  constructor(
    /** Absent: the job has no live channel, and logs ride in the outcome. */
    private readonly port: MessagePort | undefined,
    private readonly intervalMs: number,
  ) {}

  progress(progress: number, total: number | undefined, message: string | undefined): void {
    const now = performance.now();
    const wait = this.lastProgressAt + this.intervalMs - now;
    if (wait <= 0) {
      this.hasPending = false;
      this.postProgress(now, progress, total, message);
      return;
    }
    this.hasPending = true;
    this.pendingProgress = progress;
    this.pendingTotal = total;
    this.pendingMessage = message;
    // Fires only if the stage yields (an async stage); a synchronous loop posts on its next call after the interval.
    this.timer ??= setTimeout(() => this.flushPending(), wait);
  }

  log(severity: number, level: LoggingLevel, message: string, data: unknown): void {
    const budget = severity >= ERROR_SEVERITY ? (this.severe ??= new Budget()) : (this.routine ??= new Budget());
    if (!budget.take(performance.now(), this.intervalMs)) {
      this.logsDropped++;
      return;
    }
    if (data !== undefined) assertPlainJson(data, 'ctx.log data');
    const report: ReportMessage =
      data === undefined ? { type: 'log', level, message } : { type: 'log', level, message, data };
    if (this.port) this.post(report);
    else if ((this.tail ??= []).length < TAIL_LIMIT) this.tail.push(report);
    else this.logsDropped++;
  }

  /**
   * The job is over: what the outcome must carry. The throttled latest
   * progress joins the tail only if the job won (`owed`); a stopped job's
   * reports are never delivered. Undefined when there is nothing to carry.
   */
  finish(owed: boolean): JobReports | undefined {
    this.stop();
    if (owed && this.hasPending) {
      (this.tail ??= []).push(progressReport(this.pendingProgress, this.pendingTotal, this.pendingMessage));
    }
    this.hasPending = false;
    if (this.posted === 0 && !this.tail && this.logsDropped === 0) return undefined;
    return {
      posted: this.posted,
      ...(this.tail && { tail: this.tail }),
      ...(this.logsDropped > 0 && { logsDropped: this.logsDropped }),
    };
  }

  /** Clears the trailing timer: an idle Piscina worker must hold no timers for a finished job. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flushPending(): void {
    this.timer = undefined;
    if (!this.hasPending) return;
    this.hasPending = false;
    this.postProgress(performance.now(), this.pendingProgress, this.pendingTotal, this.pendingMessage);
  }

  private postProgress(now: number, progress: number, total: number | undefined, message: string | undefined): void {
    this.lastProgressAt = now;
    this.post(progressReport(progress, total, message));
  }

  private post(report: ReportMessage): void {
    if (!this.port) return;
    this.port.postMessage(report);
    this.posted++;
  }
}

function progressReport(progress: number, total: number | undefined, message: string | undefined): ReportMessage {
  return {
    type: 'progress',
    progress,
    ...(total !== undefined && { total }),
    ...(message !== undefined && { message }),
  };
}
