/**
 * What the raw HTTP load client puts on the wire and reads back, kept free
 * of sockets so that it can be tested alone: the headers and body of a
 * 2026-07-28 request (the `_meta` envelope, `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`) and of a 2025-11-25 one in a session, and the
 * reading of an answer, JSON or Server-Sent Events, down to the one response
 * that carries the request's id. A call counts only when that response is a
 * result that is not a tool error.
 */

/** The stateless revision the bench speaks over HTTP. */
export const MODERN_VERSION = '2026-07-28';
/** The session revision the bench speaks over HTTP. */
export const LEGACY_VERSION = '2025-11-25';

/** A request ready to POST. */
export interface WireRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
}

const ACCEPT = 'application/json, text/event-stream';
const CLIENT_INFO = { name: 'bench-http', version: '0.0.0' };

/** The `_meta` every 2026 request carries. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
};

/** A 2026-07-28 request: no session; the envelope in `params._meta` and the headers that must agree with it. */
export function modernRequest(id: string, method: string, params: Record<string, unknown> = {}): WireRequest {
  const name = params.name ?? params.uri;
  return {
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' && { 'mcp-name': name }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }),
  };
}

/**
 * A 2025-11-25 message: `id` undefined makes it a notification; `session` is the
 * `Mcp-Session-Id` (absent for `initialize`), `version` the revision the
 * session agreed on.
 */
export function legacyRequest(
  id: string | undefined,
  method: string,
  params: Record<string, unknown> | undefined,
  session?: string,
  version = LEGACY_VERSION,
): WireRequest {
  return {
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      ...(session !== undefined && { 'mcp-session-id': session, 'mcp-protocol-version': version }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      ...(id !== undefined && { id }),
      method,
      ...(params !== undefined && { params }),
    }),
  };
}

/** The 2025 `initialize` request. */
export function initializeRequest(id: string): WireRequest {
  return legacyRequest(id, 'initialize', {
    protocolVersion: LEGACY_VERSION,
    capabilities: {},
    clientInfo: CLIENT_INFO,
  });
}

/** What an answer held for the request's id. */
export type Outcome =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'tool-error'; readonly text: string }
  | { readonly kind: 'error'; readonly code: number; readonly message: string }
  /** No response for the id in the body (a stream that ended without one, an HTTP error without JSON-RPC). */
  | { readonly kind: 'none' };

interface Message {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code?: number; message?: string };
}

/** The JSON-RPC messages of an SSE body: each event's `data:` lines joined, parsed; anything unparsable left out. */
export function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length === 0) continue;
    try {
      out.push(JSON.parse(data.join('\n')));
    } catch {
      // a torn last event: the stream was cut
    }
  }
  return out;
}

/** The messages of a body, by its content type: SSE events, or one JSON value (a message or a batch). */
function messagesOf(contentType: string | undefined, text: string): unknown[] {
  if (contentType?.includes('text/event-stream')) return sseMessages(text);
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value : [value];
  } catch {
    return [];
  }
}

/** Reads the response to request `id` out of an answer's body. */
export function readOutcome(contentType: string | undefined, text: string, id: string): Outcome {
  for (const m of messagesOf(contentType, text) as Message[]) {
    if (typeof m !== 'object' || m === null || m.id !== id) continue;
    if (m.error) return { kind: 'error', code: m.error.code ?? 0, message: m.error.message ?? '' };
    if (m.result) {
      if (m.result.isError === true) return { kind: 'tool-error', text: JSON.stringify(m.result).slice(0, 300) };
      return { kind: 'result', result: m.result };
    }
  }
  return { kind: 'none' };
}
