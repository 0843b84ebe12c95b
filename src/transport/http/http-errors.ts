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
  rpcError(res, e.status ?? 400, ErrorCode.InvalidRequest, e.message ?? 'bad request');
}

/** Answers `status` with one JSON-RPC error (unless the response has started). */
export function rpcError(res: Response, status: number, code: number, message: string, id: RequestId | null = null): void {
  if (res.headersSent) return;
  res.status(status).json(errorResponse(id, code, message));
}
