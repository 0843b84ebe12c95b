/**
 * A tool's `execution.taskSupport` (MCP 2025-11-25, tasks): whether a
 * `tools/call` of it may, or must, carry a `task` param.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ToolExecution,
} from '@modelcontextprotocol/server';
import { MISSING_CLIENT_CAPABILITY, ProtocolErrorCode as ErrorCode, wireError } from '../server/wire-errors.js';

/** `forbidden`: plain calls only; `optional`: either; `required`: task-augmented calls only. */
export type TaskSupport = NonNullable<ToolExecution['taskSupport']>;

/** The spec's default when a tool declares nothing. */
export const DEFAULT_TASK_SUPPORT: TaskSupport = 'forbidden';

/** What `tools/list` shows for a tool. */
export function executionOf(tool: { readonly execution?: { readonly taskSupport?: TaskSupport } }): {
  taskSupport: TaskSupport;
} {
  return { taskSupport: tool.execution?.taskSupport ?? DEFAULT_TASK_SUPPORT };
}

/**
 * The spec's error (-32601, Method not found) for a call that does not match
 * the tool's task support, or undefined if it may go ahead.
 */
export function taskSupportError(
  tool: { readonly name: string; readonly execution?: { readonly taskSupport?: TaskSupport } },
  asTask: boolean,
  era: 'legacy' | 'modern' = 'legacy',
): Error | undefined {
  const support = executionOf(tool).taskSupport;
  // 2026: the extension's -32021, naming the capability the request lacked.
  if (era === 'modern' && !asTask && support === 'required')
    return wireError(
      MISSING_CLIENT_CAPABILITY,
      `tool '${tool.name}' runs only as a task: declare the io.modelcontextprotocol/tasks extension in this request's clientCapabilities`,
      { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    );
  if (asTask && support === 'forbidden')
    return wireError(
      ErrorCode.MethodNotFound,
      `tool '${tool.name}' cannot run as a task (execution.taskSupport: forbidden); call it without 'task'`,
    );
  if (!asTask && support === 'required')
    return wireError(
      ErrorCode.MethodNotFound,
      `tool '${tool.name}' runs only as a task (execution.taskSupport: required); call it with a 'task' param`,
    );
  return undefined;
}

/** The 2026-07-28 tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether a 2026 `tools/call`, as it arrives on the wire, may be answered
 * with a task: it declares the tasks extension and its tool's task support
 * is `optional` or `required`. Its job is then begun by the task runner,
 * not reserved under the request's id.
 */
export function mayBecomeTask(
  params: unknown,
  tools: ReadonlyMap<string, { readonly execution?: { readonly taskSupport?: TaskSupport } }>,
): boolean {
  const p = params as { name?: unknown; _meta?: Record<string, unknown> } | undefined;
  const meta = p?._meta;
  if (typeof meta?.[PROTOCOL_VERSION_META_KEY] !== 'string') return false;
  const extensions = (meta[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined)
    ?.extensions;
  if (extensions?.[TASKS_EXTENSION] === undefined) return false;
  const tool = typeof p?.name === 'string' ? tools.get(p.name) : undefined;
  return tool !== undefined && executionOf(tool).taskSupport !== 'forbidden';
}
