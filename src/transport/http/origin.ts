/**
 * Browser origins on the Streamable HTTP endpoint: a page may call the server
 * only from a localhost origin or one the operator allowed. Requests without
 * an `Origin` header (not a browser, or a same-origin navigation) pass.
 */
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { rpcError, type HttpStep } from './http-errors.js';

const LOCAL_HOSTS = ['127.0.0.1', 'localhost', '::1', '[::1]'];

/** A request step: 403 with a JSON-RPC error for a foreign or unreadable `Origin`. */
export function originCheck(allowed: readonly string[]): HttpStep {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (!origin) return next(); // not a browser, or same-origin navigation
    let hostname: string;
    try {
      hostname = new URL(origin).hostname;
    } catch {
      return void rpcError(res, 403, ErrorCode.InvalidRequest, `invalid Origin ${origin}`);
    }
    if (allowed.includes(origin) || LOCAL_HOSTS.includes(hostname)) return next();
    rpcError(res, 403, ErrorCode.InvalidRequest, `Origin ${origin} is not allowed`);
  };
}
