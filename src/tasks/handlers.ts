/**
 * The MCP face of tasks on one SDK server, in both eras:
 * - 2025-11-25: the `task` param of `tools/call`, and `tasks/get`,
 *   `tasks/list`, `tasks/result`, `tasks/cancel`, scoped to the session;
 * - 2026-07-28, the extension `io.modelcontextprotocol/tasks`: a flat
 *   `CreateTaskResult` (`resultType: "task"`), `tasks/get` (the result or the
 *   error inline), `tasks/update`, `tasks/cancel` (an empty ack), owned by
 *   the caller.
 * One store and one runner serve both.
 *
 * The SDK's own task handlers are not used: its `tasks/cancel` only marks
 * the task cancelled and never stops the work (and 2.x has none).
 */
import { z } from 'zod';
import {
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type ServerCapabilities,
  type Server,
  type ServerContext,
  type Task,
} from '@modelcontextprotocol/server';
import type { ClientRequestHandler, ProgressReport } from '../backend/backend.js';
import { InvalidCursorError, TaskLimitError, isTerminal, type TaskRecord } from './store.js';
import { TaskInputError, TaskNotFoundError, TaskTerminalError } from './errors.js';
import { RedisUnreachableError } from '../errors.js';
import type { TaskRunner } from './runner.js';
import { TASKS_EXTENSION, taskSupportError } from './task-support.js';
import { MISSING_CLIENT_CAPABILITY, invalidParams, serverBusy, wireError } from '../server/wire-errors.js';
import { envelopeOf } from '../server/request-envelope.js';

export { TASKS_EXTENSION } from './task-support.js';

/** The 2025 server capabilities for tasks: task-augmented tools/call, tasks/list, tasks/cancel. */
export const TASK_CAPABILITIES: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
};

/** Which face of the tasks a request sees. */
export type TaskEra = 'legacy' | 'modern';

const TaskIdParams = z.object({ taskId: z.string() }).passthrough();
const ListParams = z.object({ cursor: z.string().optional() }).passthrough().optional();
// inputResponses is optional here: the SDK lifts it out of 2026 params (into ctx.mcpReq), and a request without the
// extension must get -32021, not a params error.
const UpdateParams = z
  .object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() })
  .passthrough();

/** Whether a request came in the 2026 era (it carries the per-request envelope). */
export function eraOf(ctx: ServerContext): TaskEra {
  return envelopeOf(ctx) === undefined ? 'legacy' : 'modern';
}

/**
 * 2026: `tasks/get`, `tasks/update` and `tasks/cancel` from a request that
 * does not declare the tasks extension get -32021 (SEP-2663 via SEP-2575's
 * missing required capability), before any task is looked up.
 */
function requireExtension(ctx: ServerContext, method: string): void {
  const envelope = envelopeOf(ctx);
  if (envelope === undefined || envelope.extensions[TASKS_EXTENSION] !== undefined) return;
  throw wireError(
    MISSING_CLIENT_CAPABILITY,
    `${method} needs the ${TASKS_EXTENSION} extension: declare it in this request's clientCapabilities`,
    {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  );
}

/**
 * Registers the tasks/* handlers on `server`: 2025 requests see the tasks
 * of `session`, 2026 requests those of `caller`. Registered with their own
 * schemas: the SDK then serves them in either era (the extension's names).
 * With `only`, just that method's handler (a 2026 exchange answers one request).
 */
export function registerTaskHandlers(
  server: Server,
  runner: TaskRunner,
  session: string,
  caller: string,
  only?: string,
): void {
  const wanted = (method: string) => only === undefined || only === method;

  if (wanted('tasks/get'))
    server.setRequestHandler(
      'tasks/get',
      { params: TaskIdParams },
      onWire(async (params, ctx) => {
        if (eraOf(ctx) === 'legacy') return runner.get(session, params.taskId);
        requireExtension(ctx, 'tasks/get');
        const record = await runner.record(caller, params.taskId);
        return detailed(
          record,
          record.task.status === 'input_required' ? await runner.inputRequests(params.taskId) : undefined,
        );
      }),
    );

  if (wanted('tasks/result'))
    server.setRequestHandler(
      'tasks/result',
      { params: TaskIdParams },
      onWire(async (params, ctx) => {
        if (eraOf(ctx) === 'modern')
          throw wireError(
            -32601,
            'tasks/result is not part of the 2026-07-28 tasks extension: the result comes inline in tasks/get',
          );
        const { taskId } = params;
        const { answer } = await runner.result(session, taskId, ctx.mcpReq.signal);
        if (answer.kind === 'error') throw wireError(answer.code, answer.message);
        // The spec: tasks/result carries the related-task metadata, since a CallToolResult has no task id.
        return { ...answer.result, _meta: { ...answer.result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      }),
    );

  if (wanted('tasks/list'))
    server.setRequestHandler(
      'tasks/list',
      { params: ListParams },
      onWire(async (params, ctx) => {
        if (eraOf(ctx) === 'modern')
          throw wireError(-32601, 'tasks/list is not part of the 2026-07-28 tasks extension');
        const page = await runner.list(session, params?.cursor);
        return page.nextCursor === undefined
          ? { tasks: page.tasks }
          : { tasks: page.tasks, nextCursor: page.nextCursor };
      }),
    );

  if (wanted('tasks/cancel'))
    server.setRequestHandler(
      'tasks/cancel',
      { params: TaskIdParams },
      onWire(async (params, ctx) => {
        requireExtension(ctx, 'tasks/cancel');
        if (eraOf(ctx) === 'legacy') return runner.cancelTask(session, params.taskId);
        // 2026: an empty acknowledgement, also for a task already ended (SEP-2663: -32602 only for an unknown id); ours
        // comes only once the CAS decided, so a tasks/get right after it is final.
        await runner.cancelTask(caller, params.taskId).catch((error: unknown) => {
          if (!(error instanceof TaskTerminalError)) throw error;
        });
        return {};
      }),
    );

  if (wanted('tasks/update'))
    server.setRequestHandler(
      'tasks/update',
      { params: UpdateParams },
      onWire(async (params, ctx) => {
        if (eraOf(ctx) === 'legacy')
          throw wireError(-32601, 'tasks/update is part of the 2026-07-28 tasks extension only');
        requireExtension(ctx, 'tasks/update');
        // The SDK lifts a 2026 request's inputResponses out of its params into the context, as for a retried tools/call.
        const responses = (ctx.mcpReq as { inputResponses?: unknown }).inputResponses ?? params.inputResponses;
        if (typeof responses !== 'object' || responses === null || Array.isArray(responses))
          throw invalidParams(
            'tasks/update needs inputResponses: an object keyed by the inputRequests keys of tasks/get',
          );
        await runner.update(caller, params.taskId, responses as Record<string, unknown>);
        return {};
      }),
    );
}

/** The task runner's and the store's refusals, as the wire has them: -32602, or -32000 at a limit or while a shared store is unreachable. */
export function taskErrorOnWire(error: unknown): unknown {
  if (
    error instanceof TaskNotFoundError ||
    error instanceof TaskTerminalError ||
    error instanceof TaskInputError ||
    error instanceof InvalidCursorError
  )
    return invalidParams(error.message);
  if (error instanceof TaskLimitError || error instanceof RedisUnreachableError) return serverBusy(error.message);
  return error;
}

/** A tasks/* handler whose refusals reach the wire as {@link taskErrorOnWire} says. */
function onWire<P>(
  handler: (params: P, ctx: ServerContext) => Promise<unknown>,
): (params: P, ctx: ServerContext) => Promise<never> {
  return async (params, ctx) => {
    try {
      return (await handler(params, ctx)) as never;
    } catch (error) {
      throw taskErrorOnWire(error);
    }
  };
}

/**
 * A 2026 `tasks/get` answer: the task, with its result (completed), error
 * (failed) or outstanding questions to the client (input_required) inline, in
 * the extension's terms.
 */
export function detailed(record: TaskRecord, inputRequests?: Record<string, unknown>): Record<string, unknown> {
  const task = modernTask(record.task);
  if (record.task.status === 'input_required') return { ...task, inputRequests: inputRequests ?? {} };
  if (!isTerminal(record.task.status) || !record.answer) return task;
  if (record.task.status === 'cancelled') return { ...task, status: 'cancelled' };
  // The extension: a tool result (isError or not) makes the task completed; failed is for a JSON-RPC error only.
  if (record.answer.kind === 'result') return { ...task, status: 'completed', result: record.answer.result };
  return { ...task, status: 'failed', error: { code: record.answer.code, message: record.answer.message } };
}

/** A stored (2025-shaped) task in the extension's field names. */
export function modernTask(task: Task): Record<string, unknown> {
  const { ttl, pollInterval, ...rest } = task as Task & { ttl: number | null; pollInterval?: number };
  return { ...rest, ttlMs: ttl, ...(pollInterval !== undefined && { pollIntervalMs: pollInterval }) };
}

/**
 * A `tools/call` run as a task: checks the tool's task support, creates the
 * task and queues its job, and answers at once, with the 2025
 * `{ task }` or the 2026 flat `CreateTaskResult`. 2025: progress keeps the
 * request's progress token and status changes go out as
 * `notifications/tasks/status`, outside the request's stream (over HTTP on
 * the session's GET stream). 2026: the client polls `tasks/get`, which shows
 * the job's questions to the client while it is `input_required`.
 */
export async function callAsTask(
  server: Server,
  runner: TaskRunner,
  owner: string,
  request: CallToolRequest,
  tools: ReadonlyMap<
    string,
    {
      readonly name: string;
      readonly usesClient?: boolean;
      readonly execution?: { readonly taskSupport?: 'forbidden' | 'optional' | 'required' };
    }
  >,
  era: TaskEra,
  /** 2026: the request's declared client capabilities; its job's questions to the client become the task's inputRequests. */
  clientCapabilities: Readonly<Record<string, unknown>> = {},
): Promise<Record<string, unknown>> {
  const { name, arguments: args, _meta } = request.params;
  const taskParams = (request.params as { task?: { ttl?: number } }).task;
  const tool = tools.get(name);
  if (!tool) throw invalidParams(`unknown tool '${name}'`);
  const refusal = taskSupportError(tool, true);
  if (refusal) throw refusal;
  const progressToken = _meta?.progressToken;
  let taskId: string | undefined;
  const notify = (notification: Parameters<Server['notification']>[0]) =>
    void server.notification(notification).catch(() => undefined);
  const legacy = era === 'legacy';
  try {
    const task = await runner.create(owner, {
      tool: name,
      args: args ?? {},
      ...(taskParams?.ttl !== undefined && { ttlMs: taskParams.ttl }),
      ...(legacy &&
        progressToken !== undefined && {
          onProgress: (report: ProgressReport) =>
            notify({ method: 'notifications/progress', params: { progressToken, ...report } }),
        }),
      ...(legacy && tool.usesClient && { onClientRequest: clientRequester(server, () => taskId) }),
      ...(!legacy && tool.usesClient && { clientCapabilities }),
      ...(legacy && {
        onStatus: (changed: Task) => notify({ method: 'notifications/tasks/status', params: changed }),
      }),
    });
    taskId = task.taskId;
    if (legacy) return { task };
    return { resultType: 'task', ...modernTask(task) };
  } catch (error) {
    throw taskErrorOnWire(error);
  }
}

/** A task's requests to the client: sent on their own (the tools/call was answered), tagged with the related task. */
function clientRequester(server: Server, taskId: () => string | undefined): ClientRequestHandler {
  return async (method, params, signal) => {
    const id = taskId();
    const result: unknown = await server.request(
      { method, params } as never,
      { signal, ...(id !== undefined && { relatedTask: { taskId: id } }) } as never,
    );
    return result as Record<string, unknown>;
  };
}
