/** The answer a plain tool call's outcome owes on the wire: a result, a tool error, or a JSON-RPC error. */
import { ProtocolErrorCode as ErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import type { JobOutcome } from '../backend/backend.js';
import { serverBusy, wireError } from './wire-errors.js';

/** The answer a call's outcome owes (never called for a cancelled one). */
export function resultOf(tool: string, outcome: Exclude<JobOutcome, { kind: 'cancelled' }>): CallToolResult {
  switch (outcome.kind) {
    case 'completed':
      return outcome.result;
    case 'timedOut':
      return errorResult(`tool '${tool}' timed out after ${outcome.timeoutMs} ms and was stopped`);
    case 'failed':
      if (outcome.code === 'unknown_tool') throw wireError(ErrorCode.InvalidParams, outcome.message);
      if (outcome.code === 'queue_full') throw serverBusy(outcome.message);
      return errorResult(outcome.message);
  }
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
