/**
 * `mcp-cancel-pool/server`: serving a backend (an `Executor`, or a
 * `QueueBackend` of `mcp-cancel-pool/remote`) over stdio and Streamable HTTP,
 * and the parts to assemble a server by hand: `createMcpServer` with the wire
 * guard ({@link GuardedTransport}) and its counters ({@link newWireStats}),
 * the line transport, the parked 2026 calls ({@link InputWaits}).
 *
 * The HTTP code loads on the first {@link serveHttp}: a stdio server never
 * loads it.
 *
 * @module mcp-cancel-pool/server
 */
import type { CallBackend } from '../backend/backend.js';
import type { HttpMcpServer, HttpOptions } from '../transport/http/serve.js';

export { serveStdio } from '../transport/stdio/serve.js';
export type { StdioOptions, StdioServer } from '../transport/stdio/serve.js';
export type { HttpOptions, HttpMcpServer } from '../transport/http/serve.js';

/** Serves MCP over Streamable HTTP at `/mcp`, both protocol revisions on one endpoint (docs/serving.md). */
export async function serveHttp(backend: CallBackend, options: HttpOptions): Promise<HttpMcpServer> {
  const http = await import('../transport/http/serve.js');
  return http.serveHttp(backend, options);
}

export { AUTH_TOKEN_ENV } from '../defaults.js';
export { HttpConfigError } from '../errors.js';
export { createMcpServer, STATS_URI, serverStats, SERVER_BUSY } from '../server/server.js';
export type { CreateServerOptions, ServerStats, ServerScope } from '../server/server.js';
export { GuardedTransport, newWireStats } from '../server/guard.js';
export type { GuardOptions, WireStats } from '../server/guard.js';
export { LineTransport } from '../transport/stdio/line-transport.js';
export type { LineTransportOptions } from '../transport/stdio/line-transport.js';
// The parked 2026 calls of one backend (tools that asked the client): hand one to serveStdio / serveHttp / every guard.
export { InputWaits, type InputWaitsOptions, type InputWaitStats } from '../asks/input-waits.js';
// OAuth on HTTP (docs/operations.md "Authorization", configured by `serve`'s flags): the types serveHttp's
// `authorization` option names. Types only: the verifier (jose) loads with the HTTP code.
export type {
  AuthorizationConfig,
  AuthorizationFlags,
  ClientCredentials,
} from '../transport/http/authorization-config.js';
export type { Authorization, Authorized, HttpAnswer } from '../transport/http/authorization.js';
