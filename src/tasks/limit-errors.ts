/**
 * The task limits' refusals, one wording for every store: each names the limit
 * that refused (issue 64), the owner's first (a 2026 caller, or a 2025 session),
 * then the total.
 */
import { TaskLimitError } from '../errors.js';

/** The per-caller task limit's refusal (the owner: a 2026 caller, or a 2025 session). */
export function perOwnerTaskLimit(limits: { readonly maxWorkingTasksPerSession: number }): TaskLimitError {
  return new TaskLimitError(
    `per-caller task limit reached: this caller (or 2025 session) has ${limits.maxWorkingTasksPerSession} working tasks (--max-working-tasks-per-session); wait for one to finish or cancel one`,
  );
}

/** The total task limit's refusal; `where` says what "all" is (this process's sessions, or the queue's). */
export function totalTaskLimit(limits: { readonly maxWorkingTasks: number }, where: string): TaskLimitError {
  return new TaskLimitError(
    `total task limit reached: ${limits.maxWorkingTasks} working tasks ${where} (--max-working-tasks); try again later`,
  );
}
