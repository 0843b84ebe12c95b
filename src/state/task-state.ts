/**
 * The task state machine, in one table, for the server's task stores
 * (src/tasks/, src/remote/tasks/) and the client's task handle
 * (src/client/) alike:
 *
 * ```
 *   working ◀──────────▶ input_required      (a job's question to the client opens; the last one is answered)
 *      │                       │
 *      └──────────┬────────────┘
 *                 ▼
 *   completed | failed | cancelled            (set once: the job's one winner, carried to its task; never left)
 * ```
 *
 * A task is created `working`. Staying in a status is no move (a store may
 * rewrite its message); a terminal status is never left, so a second settle
 * finds nothing to do.
 */

/** Every status a task can have (the MCP task statuses of both revisions). */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

/** A task's status. */
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** The statuses a task never leaves. */
export type TerminalStatus = Extract<TaskStatus, 'completed' | 'failed' | 'cancelled'>;

/** The edges of the drawing above: for each status, the statuses it may move to. */
export const TASK_EDGES: { readonly [S in TaskStatus]: readonly TaskStatus[] } = {
  working: ['input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Whether a status is terminal (completed, failed, cancelled): it never changes again. Any string is accepted (a client reads what a server sent). */
export function isTerminal(status: string): status is TerminalStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Whether a task in `from` may move to `to`: an edge of {@link TASK_EDGES}. */
export function canMove(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_EDGES[from].includes(to);
}
