/**
 * A tool's `execution.taskSupport` (MCP 2025-11-25, tasks): whether a
 * `tools/call` of it may, or must, carry a `task` param.
 */
import { ErrorCode, McpError, type ToolExecution } from '@modelcontextprotocol/sdk/types.js';

/** `forbidden`: plain calls only; `optional`: either; `required`: task-augmented calls only. */
export type TaskSupport = NonNullable<ToolExecution['taskSupport']>;

/** The spec's default when a tool declares nothing. */
export const DEFAULT_TASK_SUPPORT: TaskSupport = 'forbidden';

/** What `tools/list` shows for a tool. */
export function executionOf(tool: { readonly execution?: { readonly taskSupport?: TaskSupport } }): { taskSupport: TaskSupport } {
  return { taskSupport: tool.execution?.taskSupport ?? DEFAULT_TASK_SUPPORT };
}

/**
 * The spec's error (-32601, Method not found) for a call that does not match
 * the tool's task support, or undefined if it may go ahead.
 */
export function taskSupportError(tool: { readonly name: string; readonly execution?: { readonly taskSupport?: TaskSupport } }, asTask: boolean): McpError | undefined {
  const support = executionOf(tool).taskSupport;
  if (asTask && support === 'forbidden') return new McpError(ErrorCode.MethodNotFound, `tool '${tool.name}' cannot run as a task (execution.taskSupport: forbidden); call it without 'task'`);
  if (!asTask && support === 'required') return new McpError(ErrorCode.MethodNotFound, `tool '${tool.name}' runs only as a task (execution.taskSupport: required); call it with a 'task' param`);
  return undefined;
}
