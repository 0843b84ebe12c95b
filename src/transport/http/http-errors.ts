/** JSON-RPC errors the Streamable HTTP layer answers itself, before or instead of the SDK's transport. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import type { RequestId } from '../../wire/registry.js';
import { errorResponse } from '../../server/wire-errors.js';
import { BodyError } from './json-body.js';
import { SERVER_BUSY } from '../../server/wire-errors.js';

/** A step of the endpoint's request chain (src/transport/http/serve.ts): answers the request, or calls `next`. */
export type HttpStep = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The JSON-RPC error for a refused body: 413 for a body over the limit, 400 with -32700 for bad JSON, 400 with -32600 for a body nested too deep, 415 for an encoding. */
export function bodyError(res: ServerResponse, error: BodyError): void {
  // A refused body is never read further: its connection closes once the answer is written.
  if (!res.headersSent) res.setHeader('connection', 'close');
  if (error.kind === 'busy') {
    res.setHeader('retry-after', '1');
    return void rpcError(res, 503, SERVER_BUSY, error.message);
  }
  if (error.kind === 'slow') return void rpcError(res, 408, ErrorCode.InvalidRequest, error.message);
  if (error.kind === 'too-large')
    return void rpcError(res, 413, ErrorCode.InvalidRequest, `message too large: ${error.message}`);
  if (error.kind === 'parse') return void rpcError(res, 400, ErrorCode.ParseError, `parse error: ${error.message}`);
  if (error.kind === 'deep') return void rpcError(res, 400, ErrorCode.InvalidRequest, error.message, error.id);
  rpcError(res, error.status, ErrorCode.InvalidRequest, error.message);
}

/** Answers `status` with `body` as JSON (unless the response has started). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  // An answer before the body was read (a refusal): the connection closes after it, rather than reading the rest.
  if (!res.req.complete) res.setHeader('connection', 'close');
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Answers `status` with one JSON-RPC error (unless the response has started). */
export function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: RequestId | null = null,
): void {
  sendJson(res, status, errorResponse(id, code, message));
}
