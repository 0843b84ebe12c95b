/**
 * The MCP server object for one connection: tools/list from the tool
 * definitions, tools/call through the guard's reserved job, and the
 * `executor://stats` resource.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import type { BackendStats, CallBackend, ClientRequestHandler, LogEntry, ProgressReport } from '../backend/backend.js';
import { severityOf, type LoggingLevel } from '../stages/log-levels.js';
import type { GuardedTransport, WireStats } from '../transport/guard.js';

/** The stats resource's URI. */
export const STATS_URI = 'executor://stats';
/** JSON-RPC error code for a full admission queue (implementation-defined server error range). */
export const SERVER_BUSY = -32000;

/** Everything `executor://stats` reports. */
export type ServerStats = BackendStats & WireStats;

/** Reads the combined counters. */
export function serverStats(backend: CallBackend, wire: WireStats): ServerStats {
  return { ...backend.stats(), ...wire };
}

/** Raised for a cancelled call; the SDK suppresses it and the guard would drop it. Never reaches the wire. */
class CancelledCall extends Error {}

const RESULT_SCHEMAS = {
  'sampling/createMessage': CreateMessageResultSchema,
  'elicitation/create': ElicitResultSchema,
  'roots/list': ListRootsResultSchema,
} as const;

/** Builds the SDK server for one connection; connect it to `guard`. */
export function createMcpServer(backend: CallBackend, guard: GuardedTransport, wire: WireStats, version: string): Server {
  const server = new Server(
    { name: 'mcp-cancel-pool', version },
    {
      capabilities: { tools: {}, resources: {}, logging: {} },
      instructions: 'CPU-heavy tools run on a worker pool. Cancel a call with notifications/cancelled and its work stops at the next checkpoint; no response is sent for it.',
    },
  );
  const listed: Tool[] = [...backend.tools.values()].map((tool) => ({
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as Tool['inputSchema'],
    ...(tool.annotations && { annotations: tool.annotations }),
  }));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));

  // One server per connection, so the level set here is this session's. Replaces the SDK's own handler, whose
  // level only its sendLoggingMessage reads; that sends without relatedRequestId, off the call's HTTP stream.
  let logLevel: LoggingLevel | undefined;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    logLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const job = guard.jobFor(extra.requestId);
    if (!job) throw new McpError(ErrorCode.InternalError, 'tool call was not registered');
    try {
      const progressToken = request.params._meta?.progressToken;
      const outcome = await job.start({
        tool: request.params.name,
        args: request.params.arguments ?? {},
        ...(progressToken !== undefined && {
          onProgress: (report: ProgressReport) =>
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, ...report } }).catch(() => undefined),
        }),
        onClientRequest: clientRequester(extra),
        onLog: (entry: LogEntry) => {
          // The level may have been raised since the call started.
          if (logLevel !== undefined && severityOf(entry.level)! < severityOf(logLevel)!) return;
          void extra.sendNotification({ method: 'notifications/message', params: logParams(request.params.name, entry) }).catch(() => undefined);
        },
        ...(logLevel !== undefined && { logLevel }),
        // A client that chose a level gets logs as they come; one that did not, with the response (no channel per call).
        liveLogs: logLevel !== undefined,
      });
      switch (outcome.kind) {
        case 'completed':
          return outcome.result;
        case 'timedOut':
          return errorResult(`tool '${request.params.name}' timed out after ${outcome.timeoutMs} ms and was stopped`);
        case 'cancelled':
          guard.handlerCancelled(extra.requestId);
          throw new CancelledCall();
        case 'failed':
          if (outcome.code === 'unknown_tool') throw new McpError(ErrorCode.InvalidParams, outcome.message);
          if (outcome.code === 'queue_full') throw new McpError(SERVER_BUSY, outcome.message);
          return errorResult(outcome.message);
      }
    } finally {
      guard.settled(extra.requestId);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: STATS_URI, name: 'stats', title: 'Executor counters', mimeType: 'application/json', description: 'Tool-call counters: completed, cancelled, failed, timedOut, running, queued, hardKilled, lateCancelsIgnored, responsesDropped, …' }],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== STATS_URI) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}`);
    return { contents: [{ uri: STATS_URI, mimeType: 'application/json', text: JSON.stringify(serverStats(backend, wire)) }] };
  });

  return server;
}

/** A `notifications/message` payload: the tool is the logger; `data` is the message, or `{ message, data }`. */
function logParams(tool: string, entry: LogEntry): { level: LoggingLevel; logger: string; data: unknown } {
  return { level: entry.level, logger: tool, data: entry.data === undefined ? entry.message : { message: entry.message, data: entry.data } };
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * Lets a stage's `ctx.requestClient` reach the client. While the request is
 * pending, the job's stop signal cancels it towards the client (the guard
 * sends that cancellation only if it is still pending); once it is answered,
 * the job's later stop has nothing to cancel.
 */
function clientRequester(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): ClientRequestHandler {
  return async (method, params, signal) => {
    const request = new AbortController();
    const cascade = () => request.abort(`tool call ${JSON.stringify(extra.requestId)} stopped`);
    if (signal.aborted) cascade();
    signal.addEventListener('abort', cascade, { once: true });
    try {
      const result = await extra.sendRequest({ method, params } as ServerRequest, RESULT_SCHEMAS[method], { signal: request.signal });
      return result as Record<string, unknown>;
    } finally {
      signal.removeEventListener('abort', cascade);
    }
  };
}
