/**
 * The SDK 2.x server speaks web-standard `Request`/`Response`; this is the
 * bridge to `node:http`. The SDK's own bridge (`@modelcontextprotocol/node`)
 * pulls in Hono (4 MB) for its session transport; these few functions do
 * what the endpoint needs of it with Node's built-in fetch types, so a
 * default install stays within its budget (docs/install.md).
 *
 * - {@link toWebRequest}: an `IncomingMessage` → `Request`, without the body the endpoint already parsed.
 * - {@link writeWebResponse}: a `Response` → the `ServerResponse`, streamed with
 *   backpressure; a client that goes away cancels the body, as the SDK's
 *   transport expects of a closed SSE stream.
 * - {@link NodeSessionTransport}: a 2025-11-25 session's transport
 *   (`WebStandardStreamableHTTPServerTransport`) with a Node `handleRequest`.
 * - {@link hostGuard}: the SDK's Host-header check (DNS rebinding) as a request step.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  validateHostHeader,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type JSONRPCMessage,
  type Transport,
  type TransportSendOptions,
  type WebStandardStreamableHTTPServerTransportOptions,
} from '@modelcontextprotocol/server';
import { rpcError, type HttpStep } from './http-errors.js';

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * `req` as a web `Request`, without its body. The body stays on the Node side: the endpoint read and parsed it, and
 * hands it to every SDK entry as `parsedBody` (the era door, the 2026 handler, a session's transport), which then read
 * nothing of the Request's own. Serialising it again for a body nobody reads cost a JSON.stringify, a byte count and
 * a body stream per request (issue 53's profile).
 */
export function toWebRequest(req: IncomingMessage, signal?: AbortSignal): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = `http://${first(req.headers.host) ?? 'localhost'}${req.url ?? '/'}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(url, { method, headers, ...(signal && { signal }) });
}

/** The headers that describe a body's bytes on the wire; the Request carries none. */
const BODY_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding']);

/**
 * Writes `response` to `res`: status and headers, then the body as it comes
 * (SSE events reach the client as they are written). When the client closes
 * the connection first, the body stream is cancelled at once.
 */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) return void res.end();
  const reader = response.body.getReader();
  let finished = false;
  const gone = new Promise<void>((resolve) =>
    res.once('close', () => {
      if (!finished) void reader.cancel().catch(() => undefined);
      resolve();
    }),
  );
  try {
    for (;;) {
      const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (done || res.destroyed) break;
      if (!res.write(value)) await Promise.race([new Promise<void>((resolve) => res.once('drain', resolve)), gone]);
    }
  } catch {
    // The stream failed or was cancelled: end what was sent.
  }
  finished = true;
  res.end();
}

/** A web handler (`createMcpHandler`'s) on Node: `(req, res, parsedBody)`. A client gone before the answer aborts its request. */
export function nodeHandler(handler: {
  fetch(request: Request, options?: { parsedBody?: unknown; authInfo?: AuthInfo }): Promise<Response>;
}) {
  return async (
    req: IncomingMessage,
    res: ServerResponse,
    parsedBody: unknown,
    request = abortableRequest(req, res),
  ): Promise<void> => {
    const response = await handler.fetch(request, handlerOptions(req, parsedBody));
    await writeWebResponse(response, res);
  };
}

/**
 * The web `Request` of a request whose body was read, aborted when the client closes the connection. Built once per
 * request: the era door (`isLegacyRequest`) and the 2026 handler share it, since converting (headers, the body
 * re-serialized) cost 11 % of the main thread per 2026 call when each built its own (issue 53's profile).
 */
export function abortableRequest(req: IncomingMessage, res: ServerResponse): Request {
  const abort = new AbortController();
  // Only a client gone before the answer's end: aborting after it did nothing but build a DOMException per request.
  res.once('close', () => res.writableFinished || abort.abort());
  return toWebRequest(req, abort.signal);
}

/**
 * What the SDK's handlers take beside the request: the JSON already read, and the token an authorization gate
 * verified (`req.auth`, where the SDK's own Node adapter looks too), which reaches tools as `ctx.authInfo`.
 */
function handlerOptions(req: IncomingMessage, parsedBody: unknown): { parsedBody?: unknown; authInfo?: AuthInfo } {
  const auth = (req as IncomingMessage & { auth?: AuthInfo }).auth;
  return { ...(parsedBody !== undefined && { parsedBody }), ...(auth !== undefined && { authInfo: auth }) };
}

/** A request step answering 403 (a JSON-RPC error) when the Host header names a host not in `allowed`. */
export function hostGuard(allowed: readonly string[]): HttpStep {
  return (req, res, next) => {
    const result = validateHostHeader(first(req.headers.host), [...allowed]);
    if (result.ok) return next();
    rpcError(res, 403, -32000, result.message);
  };
}

/** A 2025-11-25 session's Streamable HTTP transport, served from `node:http`. */
export class NodeSessionTransport implements Transport {
  private readonly web: WebStandardStreamableHTTPServerTransport;

  constructor(options: WebStandardStreamableHTTPServerTransportOptions) {
    this.web = new WebStandardStreamableHTTPServerTransport(options);
  }

  /** The session's id, once its initialize was accepted. */
  get sessionId(): string | undefined {
    return this.web.sessionId;
  }
  set onclose(handler: (() => void) | undefined) {
    this.web.onclose = handler;
  }
  get onclose(): (() => void) | undefined {
    return this.web.onclose;
  }
  set onerror(handler: ((error: Error) => void) | undefined) {
    this.web.onerror = handler;
  }
  get onerror(): ((error: Error) => void) | undefined {
    return this.web.onerror;
  }
  set onmessage(handler: Transport['onmessage']) {
    this.web.onmessage = handler;
  }
  get onmessage(): Transport['onmessage'] {
    return this.web.onmessage;
  }

  start(): Promise<void> {
    return this.web.start();
  }

  close(): Promise<void> {
    return this.web.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.web.send(message, options);
  }

  /** The protocol layer hands the server's versions on at connect, for the `MCP-Protocol-Version` check. */
  setSupportedProtocolVersions(versions: string[]): void {
    this.web.setSupportedProtocolVersions(versions);
  }

  /** Ends the SSE stream of POST that carried `requestId` (see response-streams.ts). */
  closeSSEStream(requestId: string | number): void {
    this.web.closeSSEStream(requestId);
  }

  /** Serves one POST, GET or DELETE of this session; `parsedBody` is the POST's JSON, already read. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void> {
    const response = await this.web.handleRequest(toWebRequest(req), handlerOptions(req, parsedBody));
    await writeWebResponse(response, res);
  }
}
