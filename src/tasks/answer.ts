/**
 * How a job's outcome becomes a task's terminal status and its `tasks/result`
 * answer: the same answer the plain `tools/call` would have given.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolErrorCode as ErrorCode, SERVER_BUSY } from '../server/wire-errors.js';
import type { JobOutcome } from '../backend/backend.js';
import type { TaskAnswer, TerminalStatus } from './store.js';

/** JSON-RPC code of `tasks/result` for a cancelled task (the code LSP and other MCP SDKs use for a cancelled request). */
export const TASK_CANCELLED = -32800;

/** The answer stored for a cancelled task: an error, never a result. */
export function cancelledAnswer(taskId: string): TaskAnswer {
  return { kind: 'error', code: TASK_CANCELLED, message: `task ${taskId} was cancelled: it has no result` };
}

/** Status, status message and answer for a job that ended other than by cancellation. */
export function settlementOf(
  outcome: Exclude<JobOutcome, { kind: 'cancelled' }>,
  tool: string,
): { status: TerminalStatus; answer: TaskAnswer; statusMessage?: string } {
  switch (outcome.kind) {
    case 'completed':
      // The spec: a tool result with isError makes the task failed; tasks/result still returns that result.
      return outcome.result.isError
        ? {
            status: 'failed',
            answer: { kind: 'result', result: outcome.result },
            statusMessage: firstText(outcome.result) ?? 'the tool returned an error',
          }
        : { status: 'completed', answer: { kind: 'result', result: outcome.result } };
    case 'timedOut': {
      const message = `tool '${tool}' timed out after ${outcome.timeoutMs} ms and was stopped`;
      return { status: 'failed', answer: { kind: 'result', result: errorResult(message) }, statusMessage: message };
    }
    case 'failed':
      if (outcome.code === 'unknown_tool')
        return {
          status: 'failed',
          answer: { kind: 'error', code: ErrorCode.InvalidParams, message: outcome.message },
          statusMessage: outcome.message,
        };
      if (outcome.code === 'queue_full')
        return {
          status: 'failed',
          answer: { kind: 'error', code: SERVER_BUSY, message: outcome.message },
          statusMessage: outcome.message,
        };
      return {
        status: 'failed',
        answer: { kind: 'result', result: errorResult(outcome.message) },
        statusMessage: outcome.message,
      };
  }
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function firstText(result: CallToolResult): string | undefined {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : undefined;
}

/** The terminal status, answer and status message of task `taskId` whose job ended with `outcome`, cancelled included. */
export function taskSettlement(
  outcome: JobOutcome,
  tool: string,
  taskId: string,
): { status: TerminalStatus; answer: TaskAnswer; statusMessage?: string } {
  if (outcome.kind === 'cancelled')
    return { status: 'cancelled', answer: cancelledAnswer(taskId), statusMessage: 'The task was cancelled.' };
  return settlementOf(outcome, tool);
}
