/**
 * What every baseline server shares: an SDK `Server` over the SDK's stdio
 * transport exposing `spin` (same schema as the built-in tool) and a
 * `bench://stats` resource whose `stopped` counter says when the work of a
 * cancelled call actually ended, so the client can time "cancel → stopped".
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SpinArgs } from './spin-body.js';

export const BASELINE_STATS_URI = 'bench://stats';

/** Ended calls remembered for late cancellations. */
const ENDED_KEPT = 4096;

/** Same input schema as workers/tools/spin.ts. */
export const spinInput = z.object({
  ms: z.number().min(0).max(3_600_000),
  stageMs: z.number().positive().max(60_000).default(1),
  cooperative: z.boolean().default(true),
});

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface BaselineCounters {
  /** Calls whose work ended after their request was cancelled (loop left, worker terminated). */
  stopped: number;
  completed: number;
  /** Cancellations received (`notifications/cancelled`). */
  cancelledCalls: number;
  /** Calls whose handler has begun (the HTTP baselines: scenario 10 waits for its calls in flight to arrive). */
  started?: number;
}

export interface BaselineOptions {
  readonly name: string;
  readonly run: (args: SpinArgs, extra: Extra) => Promise<CallToolResult>;
  readonly counters: BaselineCounters;
  readonly close?: () => Promise<void>;
}

/** `--threads N` from argv (default 1). */
export function threadsArg(): number {
  const i = process.argv.indexOf('--threads');
  const n = i >= 0 ? Number(process.argv[i + 1]) : 1;
  if (!Number.isInteger(n) || n < 1) throw new Error(`bad --threads ${process.argv[i + 1]}`);
  return n;
}

export function flag(name: string): boolean {
  return process.argv.includes(name);
}

export async function serveBaseline(options: BaselineOptions): Promise<void> {
  // Calls whose handler has returned: a cancellation that arrives for one of them found its work already stopped.
  // Bounded by count, not by a timer per call (500k live timers in a throughput run would slow the baseline down):
  // a cancellation arrives within a few calls of its request's end, never thousands of calls later.
  const ended = new Set<string | number>();
  const markEnded = (id: string | number) => {
    ended.add(id);
    if (ended.size > ENDED_KEPT) ended.delete(ended.values().next().value!);
  };
  const server = new Server({ name: options.name, version: '0.0.0' }, { capabilities: { tools: {}, resources: {} } });
  const tool: Tool = {
    name: 'spin',
    description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.',
    inputSchema: z.toJSONSchema(spinInput, { io: 'input' }) as Tool['inputSchema'],
  };
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== 'spin')
      throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name}'`);
    const parsed = spinInput.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, z.prettifyError(parsed.error));
    try {
      const result = await options.run(parsed.data, extra);
      options.counters.completed++;
      return result;
    } finally {
      markEnded(extra.requestId);
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: BASELINE_STATS_URI, name: 'stats', mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== BASELINE_STATS_URI)
      throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}`);
    return {
      contents: [{ uri: BASELINE_STATS_URI, mimeType: 'application/json', text: JSON.stringify(options.counters) }],
    };
  });
  const transport = new StdioServerTransport();
  transport.onclose = () => void (options.close?.() ?? Promise.resolve()).finally(() => process.exit(0));
  await server.connect(transport);
  const dispatch = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      options.counters.cancelledCalls++;
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined && ended.has(id)) {
        ended.delete(id);
        options.counters.stopped++;
      }
    }
    dispatch?.(message);
  };
  process.stdin.once('end', () => void server.close());
  process.stderr.write(`[${options.name}] serving on stdio\n`);
}
