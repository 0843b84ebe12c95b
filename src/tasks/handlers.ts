/**
 * The MCP face of tasks on one connection's SDK server: the `task` branch of
 * `tools/call` and the `tasks/get`, `tasks/list`, `tasks/result` and
 * `tasks/cancel` handlers, all scoped to the connection's session.
 *
 * The SDK's own task handlers (its `taskStore` option) are not used: its
 * `tasks/cancel` only marks the task cancelled and never stops the work.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListRootsResultSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CreateTaskResult,
  type ServerCapabilities,
  type ServerRequest,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientRequestHandler, ProgressReport } from '../backend/backend.js';
import { InvalidCursorError, TaskLimitError } from './store.js';
import type { TaskRunner } from './runner.js';
import { taskSupportError } from './task-support.js';

/** The server capabilities for tasks: task-augmented tools/call, tasks/list, tasks/cancel. */
export const TASK_CAPABILITIES: NonNullable<ServerCapabilities['tasks']> = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** JSON-RPC code for a task refused at a limit (the implementation-defined range, like a full queue). */
const TASK_LIMIT = -32000;

const CLIENT_RESULT_SCHEMAS = {
  'sampling/createMessage': CreateMessageResultSchema,
  'elicitation/create': ElicitResultSchema,
  'roots/list': ListRootsResultSchema,
} as const;

/** Registers the tasks/* handlers on `server`, for the tasks of `owner` (this connection's session). */
export function registerTaskHandlers(server: Server, runner: TaskRunner, owner: string): void {
  server.setRequestHandler(GetTaskRequestSchema, async (request) => runner.get(owner, request.params.taskId));

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const { answer } = await runner.result(owner, taskId, extra.signal);
    if (answer.kind === 'error') throw new McpError(answer.code, answer.message);
    // The spec: tasks/result carries the related-task metadata, since a CallToolResult has no task id.
    return { ...answer.result, _meta: { ...answer.result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request) => {
    try {
      const page = await runner.list(owner, request.params?.cursor);
      return page.nextCursor === undefined ? { tasks: page.tasks } : { tasks: page.tasks, nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new McpError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => runner.cancel(owner, request.params.taskId));
}

/**
 * A `tools/call` with a `task` param: checks the tool's task support, creates
 * the task and queues its job, and answers at once with the CreateTaskResult.
 * Progress keeps the request's progress token; status changes go out as
 * `notifications/tasks/status`. Both travel outside the request's stream
 * (which ends with this answer): over HTTP on the session's GET stream, when
 * the client keeps one open.
 */
export async function callAsTask(server: Server, runner: TaskRunner, owner: string, request: CallToolRequest, tools: ReadonlyMap<string, { readonly name: string; readonly usesClient?: boolean }>): Promise<CreateTaskResult> {
  const { name, arguments: args, task: taskParams, _meta } = request.params;
  const tool = tools.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${name}'`);
  const refusal = taskSupportError(tool, true);
  if (refusal) throw refusal;
  const progressToken = _meta?.progressToken;
  let taskId: string | undefined;
  const notify = (notification: Parameters<Server['notification']>[0]) => void server.notification(notification).catch(() => undefined);
  try {
    const task = await runner.create(owner, {
      tool: name,
      args: args ?? {},
      ...(taskParams?.ttl !== undefined && { ttlMs: taskParams.ttl }),
      ...(progressToken !== undefined && { onProgress: (report: ProgressReport) => notify({ method: 'notifications/progress', params: { progressToken, ...report } }) }),
      ...(tool.usesClient && { onClientRequest: clientRequester(server, () => taskId) }),
      onStatus: (changed: Task) => notify({ method: 'notifications/tasks/status', params: changed }),
    });
    taskId = task.taskId;
    return { task };
  } catch (error) {
    if (error instanceof TaskLimitError) throw new McpError(TASK_LIMIT, error.message);
    throw error;
  }
}

/** A task's requests to the client: sent on their own (the tools/call was answered), tagged with the related task. */
function clientRequester(server: Server, taskId: () => string | undefined): ClientRequestHandler {
  return async (method, params, signal) => {
    const id = taskId();
    const result = await server.request({ method, params } as ServerRequest, CLIENT_RESULT_SCHEMAS[method], { signal, ...(id !== undefined && { relatedTask: { taskId: id } }) });
    return result as Record<string, unknown>;
  };
}
