/** JSON-RPC errors the Streamable HTTP layer answers itself, before or instead of the SDK's transport. */
import type { NextFunction, Request, Response } from 'express';
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import type { RequestId } from '../../wire/registry.js';
import { errorResponse } from '../../server/wire-errors.js';

/** Express error handler for the body parser: 413 for a body over the limit, 400 with -32700 for bad JSON. */
export function bodyErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (!error) return next();
  const e = error as { type?: string; status?: number; message?: string };
  if (e.type === 'entity.too.large') return void rpcError(res, 413, ErrorCode.InvalidRequest, `message too large: ${e.message ?? ''}`);
  if (e.type === 'entity.parse.failed') return void rpcError(res, 400, ErrorCode.ParseError, `parse error: ${e.message ?? ''}`);
  // Any other body-parser error (bad charset, aborted upload, …) is the client's: its status and message, never a stack.
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return void rpcError(res, e.status, ErrorCode.InvalidRequest, e.message ?? 'bad request');
  next(error);
}

/**
 * The last Express error handler: whatever a route threw is answered with a
 * bare JSON-RPC internal error (HTTP 500) and logged to stderr. Express's own
 * handler would send an HTML page with the stack and the server's paths.
 */
export function lastResort(log: (line: string) => void): (error: unknown, req: Request, res: Response, next: NextFunction) => void {
  return (error, req, res, _next) => {
    log(`http: ${req.method} ${req.path} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (res.headersSent) return void res.destroy();
    rpcError(res, 500, ErrorCode.InternalError, 'internal error');
  };
}

/** Anything but the MCP endpoint and the health routes: a plain 404 (Express's default is an HTML page). */
export function notFound(_req: Request, res: Response): void {
  res.status(404).type('text/plain').send('not found\n');
}

/** Answers `status` with one JSON-RPC error (unless the response has started). */
export function rpcError(res: Response, status: number, code: number, message: string, id: RequestId | null = null): void {
  if (res.headersSent) return;
  res.status(status).json(errorResponse(id, code, message));
}
