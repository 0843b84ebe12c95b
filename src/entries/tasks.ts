/**
 * `mcp-cancel-pool/tasks`: tasks in both eras. The runner that a backend's
 * servers share (`new TaskRunner(backend, { store })`, passed to
 * `serveStdio` / `serveHttp` / `createMcpServer` of `mcp-cancel-pool/server`
 * as their `tasks`), the store interface (`RedisTaskStore` of
 * `mcp-cancel-pool/remote` implements it for several hosts), the in-memory
 * default, and the errors.
 *
 * @module mcp-cancel-pool/tasks
 */
export { TaskRunner, taskSession } from '../tasks/runner.js';
export type {
  TaskBackend,
  TaskCall,
  TaskRunnerOptions,
  TaskStats,
  WindowDecision,
  WindowedCall,
  WindowHooks,
} from '../tasks/runner.js';
export { TaskNotFoundError, TaskTerminalError } from '../tasks/errors.js';
export { MemoryTaskStore } from '../tasks/memory-store.js';
export { InvalidCursorError, TaskLimitError } from '../tasks/store.js';
export type { TaskAnswer, TaskLimits, TaskPage, TaskRecord, TaskStore, TerminalStatus } from '../tasks/store.js';
export type { TaskSupport } from '../tasks/task-support.js';
// With a store shared by front ends, their 2026 tasks' questions to the client are shared too (`sharedInputs`).
export type { SharedClaim, SharedQuestion, SharedTaskInputs } from '../tasks/shared-task-inputs.js';
