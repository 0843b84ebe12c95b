/**
 * A 2026-07-28 `notifications/cancelled` sent by POST. The revision's only HTTP cancel is a closed response stream,
 * and the SDK 2.x client POSTs the notification instead whenever its transport is wrapped (a logging tap, a proxy):
 * ignored, the work would run to its end and be answered. Honoured only where the id names a call without doubt:
 * for an authenticated caller (OAuth: each token's `iss`, `sub` and client is a caller of its own), whose in-flight
 * 2026 requests with that id are exactly one, by closing that call's stream (the cancel the revision defines).
 * Otherwise refused with 400, and one warn line a minute says why (the client may never show the error): without
 * authentication every client is the same caller, and one could cancel another's call by guessing a small id.
 */
import type { ServerResponse } from 'node:http';
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { errorResponse } from '../../server/wire-errors.js';
import { sendJson } from './http-errors.js';

/** How often the refusal is logged at most. */
const WARN_EVERY_MS = 60_000;

/** Why a POSTed 2026 cancel was refused, as the client and the log see it. */
export const POST_CANCEL_REFUSED =
  'a 2026-07-28 request is cancelled by closing its response stream; notifications/cancelled by POST is honoured only for an authenticated caller whose requestId names exactly one of its own requests in flight';

/** The 2026 requests in flight over HTTP, by caller and id: the streams a POSTed cancel may close. */
export class ModernInFlight {
  private readonly byCaller = new Map<string, Map<string, Set<ServerResponse>>>();
  private warnedAt = -Infinity;

  /**
   * @param authenticated whether callers are told apart by a verified token (OAuth); without, no POST cancel is honoured.
   * @param log the server's warn line.
   */
  constructor(
    private readonly authenticated: boolean,
    private readonly log: (line: string) => void,
  ) {}

  /** Tracks the stream of the request `id` of `caller` until it closes. */
  track(caller: string, id: string | number, res: ServerResponse): void {
    const key = JSON.stringify(id);
    let ids = this.byCaller.get(caller);
    if (!ids) this.byCaller.set(caller, (ids = new Map<string, Set<ServerResponse>>()));
    let streams = ids.get(key);
    if (!streams) ids.set(key, (streams = new Set<ServerResponse>()));
    streams.add(res);
    res.once('close', () => {
      streams.delete(res);
      if (streams.size === 0) ids.delete(key);
      if (ids.size === 0) this.byCaller.delete(caller);
    });
  }

  /** Answers a POSTed 2026 `notifications/cancelled` of `caller`: 202 with the call's stream closed, or 400. */
  cancel(caller: string, requestId: unknown, res: ServerResponse): void {
    const key = typeof requestId === 'string' || typeof requestId === 'number' ? JSON.stringify(requestId) : undefined;
    const streams = this.authenticated && key !== undefined ? this.byCaller.get(caller)?.get(key) : undefined;
    if (streams?.size === 1) {
      const [stream] = streams;
      stream!.destroy(); // the closed stream cancels the call, as the client's own close would
      res.writeHead(202).end();
      return;
    }
    const now = Date.now();
    if (now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      const why = !this.authenticated
        ? 'the server has no per-caller authentication (--auth-issuer)'
        : `the caller has ${streams?.size ?? 0} requests in flight with that id`;
      this.log(`warn: refused a 2026 notifications/cancelled sent by POST (${why}); ${POST_CANCEL_REFUSED}`);
    }
    sendJson(res, 400, errorResponse(null, ErrorCode.InvalidRequest, POST_CANCEL_REFUSED));
  }
}
