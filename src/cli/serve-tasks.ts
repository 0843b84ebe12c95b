/**
 * The tasks of `serve`: one runner for every session of the server, its limits from the flags, its store in
 * Redis with `--redis` (every front end of the queue reads and cancels them, docs/many-hosts.md "Many hosts") and in memory
 * otherwise; and the parked 2026 calls of tools that ask the client.
 */
import type { CallBackend } from '../backend/backend.js';
// A type only: a value import would load BullMQ and ioredis into every server, Redis or not (serve-remote.ts).
import type { QueueBackend } from '../remote/front/queue-backend.js';
import { STDIO_SESSION } from '../transport/stdio/serve.js';
import { TaskRunner, type TaskBackend } from '../tasks/runner.js';
import { InputWaits } from '../asks/input-waits.js';
import { queueTaskStore } from './serve-remote.js';

/** The `serve` flags the task runner takes. */
export interface TaskFlags {
  readonly maxWorkingTasksPerSession: number;
  readonly maxWorkingTasks: number;
  readonly maxFinishedTaskBytes: number;
  readonly taskTtlMs: number;
  readonly maxTaskTtlMs: number;
  readonly taskAfterMs: number;
  readonly inputWaitMs: number;
  /** Absent: the runner's default (max(60 s, 20 × pollInterval)). */
  readonly taskLeaseMs?: number;
  readonly taskLeaseClientTasks: boolean;
}

/**
 * The task runner over `calls` (the instrumented backend the server sees); `queue` is the backend under it when
 * that is the Redis queue (tasks are then stored in Redis), else undefined. `log` gets one line when a session's
 * close cancelled working tasks.
 */
export function serveTasks(
  queue: QueueBackend | undefined,
  calls: TaskBackend,
  flags: TaskFlags,
  log: (line: string) => void,
): TaskRunner {
  const taskLimits = {
    maxWorkingTasksPerSession: flags.maxWorkingTasksPerSession,
    maxWorkingTasks: flags.maxWorkingTasks,
    maxFinishedTaskBytes: flags.maxFinishedTaskBytes,
    defaultTtlMs: flags.taskTtlMs,
    maxTtlMs: flags.maxTaskTtlMs,
  };
  return new TaskRunner(calls, {
    ...taskLimits,
    ...(queue && { store: queueTaskStore(queue, taskLimits), sharedInputs: queue.taskInputs() }),
    taskAfterMs: flags.taskAfterMs,
    inputWaitMs: flags.inputWaitMs,
    ...(flags.taskLeaseMs !== undefined && { taskLeaseMs: flags.taskLeaseMs }),
    leaseClientTasks: flags.taskLeaseClientTasks,
    onOwnerClosed: (owner, cancelled) => {
      // A stdio connection's close is the shutdown: its line says what it cancelled.
      if (cancelled > 0 && owner !== STDIO_SESSION) log(`session closed: cancelled ${cancelled} working task(s)`);
    },
  });
}

/**
 * The parked 2026 calls over `calls`. With `--redis` a retry may reach any front end, so parked calls are shared
 * through Redis under a `requestState` key every front end has: `mrtrKey` (`--mrtr-key-file`) or one derived from
 * the cluster key. Throws a one-line message when tools ask the client and there is neither.
 */
export function serveInputWaits(
  queue: QueueBackend | undefined,
  calls: CallBackend,
  inputWaitMs: number,
  mrtrKey: Buffer | undefined,
): InputWaits {
  const stateKey = mrtrKey ?? queue?.requestStateKey();
  if (queue && stateKey === undefined && [...queue.tools.values()].some((t) => t.usesClient === true)) {
    throw new Error(
      '--redis with tools that ask the client (usesClient) needs a key shared by every front end for 2026 requestState: give --cluster-key-file (the key is derived from it) or --mrtr-key-file',
    );
  }
  const shared = queue?.parking();
  return new InputWaits(calls, { waitMs: inputWaitMs, ...(stateKey && { key: stateKey }), ...(shared && { shared }) });
}
