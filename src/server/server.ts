/**
 * The MCP server object for one connection: tools/list from the tool
 * definitions, tools/call through the connection's {@link ToolCalls}, and
 * the `executor://stats` resource.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { BackendStats, CallBackend } from '../backend/backend.js';
import type { GuardedTransport, WireStats } from './guard.js';

export { SERVER_BUSY } from './tool-calls.js';

/** The stats resource's URI. */
export const STATS_URI = 'executor://stats';

/** Everything `executor://stats` reports. */
export type ServerStats = BackendStats & WireStats;

/** Reads the combined counters. */
export function serverStats(backend: CallBackend, wire: WireStats): ServerStats {
  return { ...backend.stats(), ...wire };
}

/** The `tools/list` entries of a backend's tools. */
export function listedTools(backend: CallBackend): Tool[] {
  return [...backend.tools.values()].map((tool) => ({
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as Tool['inputSchema'],
    ...(tool.annotations && { annotations: tool.annotations }),
  }));
}

/** Builds the SDK server for one connection; connect it to `guard`. */
export function createMcpServer(backend: CallBackend, guard: GuardedTransport, wire: WireStats, version: string): Server {
  const server = new Server(
    { name: 'mcp-cancel-pool', version },
    {
      capabilities: { tools: {}, resources: {}, logging: {} },
      instructions: 'CPU-heavy tools run on a worker pool. Cancel a call with notifications/cancelled and its work stops at the next checkpoint; no response is sent for it.',
    },
  );
  const calls = guard.calls;
  const listed = listedTools(backend);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));

  // Replaces the SDK's own handler, whose level only its sendLoggingMessage reads; that sends without
  // relatedRequestId, off the call's HTTP stream.
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    calls.logLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => calls.handle(request, extra));

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: STATS_URI, name: 'stats', title: 'Executor counters', mimeType: 'application/json', description: 'Tool-call counters: completed, cancelled, failed, timedOut, running, queued, hardKilled, lateCancelsIgnored, responsesDropped, …' }],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== STATS_URI) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}`);
    return { contents: [{ uri: STATS_URI, mimeType: 'application/json', text: JSON.stringify(serverStats(backend, wire)) }] };
  });

  return server;
}
