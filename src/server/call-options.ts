/**
 * What a `tools/call` hands the backend besides the tool and its arguments:
 * where its progress, logs and requests to the client go. Shared by every way
 * a call runs (a response now, or a task).
 */
import type { CallToolRequest, ProgressToken, ServerContext } from '@modelcontextprotocol/server';
import type { ClientRequestHandler, LogEntry, ProgressReport, StartOptions } from '../backend/backend.js';
import { severityOf, type LoggingLevel } from '../stages/log-levels.js';

/** The SDK's per-request context of a server handler. */
export type HandlerExtra = ServerContext;

/** The backend's start options for one call; `logLevel` is read again for every message (the client may raise it). */
export function startOptions(
  request: CallToolRequest,
  extra: HandlerExtra,
  logLevel: () => LoggingLevel | undefined,
  modern = false,
): StartOptions {
  const progressToken = request.params._meta?.progressToken;
  const level = logLevel();
  return {
    tool: request.params.name,
    args: request.params.arguments ?? {},
    ...(progressToken !== undefined && {
      onProgress: (report: ProgressReport) => sendProgress(extra, progressToken, report),
    }),
    onClientRequest: clientRequester(extra),
    onLog: (entry: LogEntry) => {
      const now = logLevel();
      if (modern && now === undefined) return;
      if (now !== undefined && severityOf(entry.level)! < severityOf(now)!) return;
      void extra.mcpReq
        .notify({ method: 'notifications/message', params: logParams(request.params.name, entry) })
        .catch(() => undefined);
    },
    ...(level !== undefined && { logLevel: level }),
    // A client that chose a level gets logs as they come; one that did not, with the response (no channel per call).
    liveLogs: level !== undefined,
  };
}

/** Sends one progress report on the request's token; whether it may go is decided by the caller (or the guard, at the wire). */
export function sendProgress(extra: HandlerExtra, progressToken: ProgressToken, report: ProgressReport): void {
  void extra.mcpReq
    .notify({ method: 'notifications/progress', params: { progressToken, ...report } })
    .catch(() => undefined);
}

/** A `notifications/message` payload: the tool is the logger; `data` is the message, or `{ message, data }`. */
export function logParams(tool: string, entry: LogEntry): { level: LoggingLevel; logger: string; data: unknown } {
  return {
    level: entry.level,
    logger: tool,
    data: entry.data === undefined ? entry.message : { message: entry.message, data: entry.data },
  };
}

/**
 * Lets a stage's `ctx.requestClient` reach the client. While the request is
 * pending, the job's stop signal cancels it towards the client (the guard
 * sends that cancellation only if it is still pending); once it is answered,
 * the job's later stop has nothing to cancel.
 */
export function clientRequester(extra: HandlerExtra): ClientRequestHandler {
  return async (method, params, signal) => {
    const request = new AbortController();
    const cascade = () => request.abort(`tool call ${JSON.stringify(extra.mcpReq.id)} stopped`);
    if (signal.aborted) cascade();
    signal.addEventListener('abort', cascade, { once: true });
    try {
      const result: unknown = await extra.mcpReq.send({ method, params } as never, { signal: request.signal });
      return result as Record<string, unknown>;
    } finally {
      signal.removeEventListener('abort', cascade);
    }
  };
}
