/**
 * The nesting rule of the stdio transport, on HTTP: a JSON body nested deeper
 * than the limit is refused with `-32600` before anything recursive (the
 * SDK's schema, `JSON.stringify` in `toWebRequest`, a structured clone to a
 * worker) reads it. Without it, ~5,000 levels overflowed the stack in a
 * route and Express answered with its HTML error page.
 */
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { nestingDepth, requestIdOf } from '../envelope.js';
import { rpcError } from './http-errors.js';

/** Bodies found too deep while the body parser read them (the parser's `verify` hook sees the raw bytes). */
const tooDeep = new WeakSet<IncomingMessage>();

/**
 * The body parser's `verify` hook: marks a body nested deeper than
 * `maxDepth`. It only marks, so that the refusal can name the request's id
 * once the body is parsed (JSON.parse itself does not recurse).
 */
export function depthCheck(maxDepth: number): (req: IncomingMessage, res: unknown, body: Buffer) => void {
  return (req, _res, body) => {
    // Valid JSON of n bytes nests at most n/2 deep: a short body is never scanned.
    if (body.length > 2 * maxDepth && nestingDepth(body.toString('utf8'), maxDepth) > maxDepth) tooDeep.add(req);
  };
}

/** Middleware after the body parser: refuses a body {@link depthCheck} marked, with HTTP 400 and `-32600`. */
export function refuseDeep(maxDepth: number): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    if (!tooDeep.has(req)) return next();
    rpcError(res, 400, ErrorCode.InvalidRequest, `message nested deeper than ${maxDepth} levels`, requestIdOf(req.body) ?? null);
  };
}
