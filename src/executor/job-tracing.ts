/**
 * How a job's spans are made without the executor importing OpenTelemetry:
 * the job drives a {@link JobTraceHooks} that src/otel/job-trace.ts
 * registers here when it loads (the entry points and the CLI load it). With
 * none registered, or no SDK registered (the hook then returns undefined),
 * a job makes no trace and allocates nothing for one.
 */
import type { CancelResult, ClientRequestHandler, JobOutcome } from '../backend/backend.js';
import type { StageMarks } from '../pool/protocol.js';
import type { CancelSource } from '../state/cancel-source.js';

/** One job's spans, in the order the job calls them. */
export interface JobTraceHooks {
  /** It left the wait for a slot and runs on a worker thread. */
  running(): void;
  /** A cancel asked by `source` (or the deadline) was decided by the state word's compare-exchange. */
  cancelDecided(source: CancelSource, result: CancelResult): void;
  /** The grace period expired: the thread running the stopped job is being terminated. */
  hardStop(threadId: number): void;
  /** The main thread signalled one of the call's process groups (a bound function: it is passed on as it is). */
  readonly childKilled: (pid: number, signal: 'SIGTERM' | 'SIGKILL') => void;
  /** The worker's measure of the call's worst checkpoint gap (./checkpoint-gaps.ts), for the run span. */
  checkpointGap(gap: { readonly ms: number; readonly stage: string; readonly budgetMs: number }): void;
  /** The worker returned (or died), with the stage timings it sent back. */
  workerBack(marks: StageMarks | undefined, threadId: number | undefined): void;
  /** The outcome settled. */
  settled(outcome: JobOutcome): void;
  /** Wraps the job's requests to the client, so each is traced. */
  clientRequests(handler: ClientRequestHandler): ClientRequestHandler;
}

/** Makes a job's spans as it starts under the active context; undefined while nothing traces. */
export type BeginJobTrace = (tool: string) => JobTraceHooks | undefined;

let begin: BeginJobTrace | undefined;

/** Registers who makes jobs' spans (src/otel/job-trace.ts, once, as it loads). */
export function traceJobsWith(maker: BeginJobTrace): void {
  begin = maker;
}

/** The spans of a job of `tool` starting now, or undefined. */
export function beginJobTrace(tool: string): JobTraceHooks | undefined {
  return begin?.(tool);
}
