/**
 * What the task runner refuses, as errors with a stable `code` (the tasks/*
 * handlers put them on the wire as -32602; the runner builds no wire errors).
 */
import { McpCancelPoolError } from '../errors.js';

/** No such task for this owner: an unknown id, an expired task and another owner's task all look the same. */
export class TaskNotFoundError extends McpCancelPoolError {
  constructor(readonly taskId: string) {
    super(
      'ERR_TASK_NOT_FOUND',
      `Failed to retrieve task: Task not found (${JSON.stringify(taskId)}: unknown, expired, removed to bound finished results, or another session's)`,
    );
  }
}

/** `tasks/cancel` of a task already terminal, or whose completion won the race with the cancel. */
export class TaskTerminalError extends McpCancelPoolError {
  constructor(readonly status: string) {
    super('ERR_TASK_TERMINAL', `Cannot cancel task: already in terminal status '${status}'`);
  }
}

/** 2026 `tasks/update` that cannot feed the task: it waits for no input, or the responses answer none of its questions (or are malformed). */
export class TaskInputError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_TASK_INPUT', message);
  }
}
