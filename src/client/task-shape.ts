/** Task shapes of both eras, as the client's task handle reads them. */
import { ProtocolError, ProtocolErrorCode, type Task } from '@modelcontextprotocol/client';

/** The 2026-07-28 tasks extension, declared in the envelope of a tools/call that may become a task. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** `completed`, `failed` or `cancelled`: the status never changes again (the one task table, src/state/task-state.ts). */
export { isTerminal } from '../state/task-state.js';

/** A 2026 task (flat, `ttlMs`, `pollIntervalMs`, inline result, error or input requests) in the 2025 shape the handle shows in both eras. */
export function fromModern(raw: Record<string, unknown>): Task {
  const {
    ttlMs,
    pollIntervalMs,
    resultType: _,
    result: __,
    error: ___,
    inputRequests: ____,
    _meta: _____,
    ...rest
  } = raw;
  return {
    ...rest,
    ttl: (ttlMs as number | null | undefined) ?? null,
    ...(typeof pollIntervalMs === 'number' && { pollInterval: pollIntervalMs }),
  } as Task;
}

/** A 2026 failed task's inline JSON-RPC error as a `ProtocolError`. */
export function errorOf(error: unknown): ProtocolError {
  const e = (error ?? {}) as { code?: number; message?: string; data?: unknown };
  return new ProtocolError(e.code ?? ProtocolErrorCode.InternalError, e.message ?? 'task failed', e.data);
}
