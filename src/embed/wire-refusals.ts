/**
 * The SDK's `McpServer` turns anything a tool handler throws into a tool
 * error result (`isError: true`); only its own `tools/call` handler can answer
 * with a JSON-RPC error. `serve` answers a call refused by a full queue with
 * the JSON-RPC error -32000, and a pooled tool must answer it the same way. So
 * each server gets one wrapper around its `tools/call` handler: a pooled call
 * that was refused leaves its error under the request's signal, and the
 * wrapper throws it, which the SDK sends as that error.
 *
 * The handler table is the SDK's `Protocol._requestHandlers`, not public API;
 * where it is missing (another SDK version), the refusal reaches the client
 * as a tool error with the same message.
 */
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';

type Handler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/** Wrappers already installed, so registering twice on a server wraps once. */
const installed = new WeakSet<Handler>();

/** Installs the wrapper on `server`'s `tools/call` handler (once its tools are registered, so that the handler exists). */
export function answerRefusals(server: McpServer, refusals: WeakMap<AbortSignal, Error>): boolean {
  const handlers = (server.server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return false;
  const inner = handlers.get('tools/call') as Handler | undefined;
  if (inner === undefined) return false;
  if (installed.has(inner)) return true;
  const outer: Handler = async (request, ctx) => {
    const result = await inner(request, ctx);
    const refusal = refusals.get(ctx.mcpReq.signal);
    if (refusal === undefined) return result;
    refusals.delete(ctx.mcpReq.signal);
    throw refusal;
  };
  installed.add(outer);
  handlers.set('tools/call', outer);
  return true;
}
