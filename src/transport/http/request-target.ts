/**
 * The request target, per RFC 9112 §3.2: origin-form (`/mcp?x`) as is; absolute-form (`http://host:port/mcp`) served
 * as §3.2.2 asks, its authority replacing the Host header ("a server MUST ignore the received Host header field …
 * and instead use the host information of the request-target"), so the Host check that follows judges that host and a
 * foreign one gets the same 403 a foreign Host header gets; anything else (asterisk-form, authority-form, a scheme
 * other than http or https, an unparsable URL) gets 400. The first step of the chain: every later one sees an
 * origin-form `req.url` and the host the request is for.
 */
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { rpcError, type HttpStep } from './http-errors.js';

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** The chain step described in the module comment. */
export const requestTarget: HttpStep = (req, res, next) => {
  const target = req.url ?? '';
  if (target.startsWith('/')) return next();
  let url: URL | undefined;
  if (ABSOLUTE.test(target)) {
    try {
      url = new URL(target);
    } catch {
      url = undefined;
    }
  }
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.host === '' ||
    url.username ||
    url.password
  )
    return void rpcError(
      res,
      400,
      ErrorCode.InvalidRequest,
      'bad request target: origin-form (/mcp) or an http(s) absolute-form URL',
    );
  req.headers.host = url.host;
  req.url = `${url.pathname}${url.search}`;
  next();
};
