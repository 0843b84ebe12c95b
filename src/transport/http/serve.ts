/**
 * Streamable HTTP, both eras on one endpoint. `isLegacyRequest` tells them
 * apart. 2025-11-25: one SDK transport, guard and server per MCP session;
 * cancellation reaches a job through the process-wide registry, whichever
 * request carried it; a client that drops the response stream of a pending
 * POST has cancelled the requests in it; DELETE or idle expiry closes the
 * session and cancels what it still runs. 2026-07-28: no sessions; the SDK's
 * per-request handler (`legacy: 'reject'`, never its per-request 2025
 * fallback, which would lose a 2025 cancel), a guard under each exchange,
 * and a closed response stream is that request's cancellation.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  ProtocolErrorCode as ErrorCode,
  type Transport,
} from '@modelcontextprotocol/server';
import type { CallBackend } from '../../backend/backend.js';
import type { RequestId } from '../../wire/registry.js';
import { createMcpServer, SERVER_BUSY } from '../../server/server.js';
import { errorResponse } from '../../server/wire-errors.js';
import { TaskRunner } from '../../tasks/runner.js';
import { MemoryTaskStore } from '../../tasks/memory-store.js';
import { CallerBook, type CallerCounts } from '../../server/caller-stats.js';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { InputWaits } from '../../asks/input-waits.js';
import { GuardedTransport, type WireStats } from '../../server/guard.js';
import { acceptedHostnames, bearerAuth, checkExposure } from './access.js';
import { requestCaller, send, type Authorization, type AuthorizedRequest } from './authorization.js';
import { duplicateRequests, malformedMessages } from './door.js';
import { SessionTable, type SessionSlot } from './session-table.js';
import { bodyError, rpcError, sendJson, type HttpStep } from './http-errors.js';
import { BodyError, isJson, readJsonBody } from './json-body.js';
import { DecodeSlots } from './decode-slots.js';
import { closeUnreadAfterAnswer } from './linger.js';
import { requestTarget } from './request-target.js';
import { escapeForLog, logger } from '../../log/logger.js';
import {
  abortableRequest,
  hostGuard,
  nodeHandler,
  NodeSessionTransport as StreamableHTTPServerTransport,
} from './node-adapter.js';
import { originCheck } from './origin.js';
import { ModernInFlight } from './post-cancel.js';
import { ResponseStreams } from './response-streams.js';
import { OutputBudget } from '../output-budget.js';
import { DEFAULTS } from '../../defaults.js';

/** The cancel reason of a 2026 call whose response stream the client closed (metrics: source `closed_stream`). */
const CLIENT_DISCONNECTED = 'client disconnected';

/** Options for {@link serveHttp}. */
export interface HttpOptions {
  /**
   * Interface to bind. Anything but loopback needs {@link HttpOptions.authToken}
   * or {@link HttpOptions.allowUnauthenticated}.
   * @default '127.0.0.1'
   */
  readonly host?: string;
  /** Port; 0 picks a free one. Default 3000. */
  readonly port?: number;
  /** Largest accepted request body. Default 4 MiB. */
  readonly maxMessageBytes?: number;
  /** A session with nothing in flight and no request for this long is closed. Default 10 minutes. */
  readonly sessionIdleMs?: number;
  /**
   * Host names accepted in the Host header. Without it: the localhost names
   * on a loopback bind; those and this machine's interface addresses on
   * 0.0.0.0 or ::; the bound name or address otherwise.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Every request must carry `Authorization: Bearer <authToken>`; others get
   * 401 with a `WWW-Authenticate` challenge. At least 16 visible ASCII characters.
   */
  readonly authToken?: string;
  /**
   * Serve a non-loopback interface without {@link HttpOptions.authToken}.
   * @default false
   */
  readonly allowUnauthenticated?: boolean;
  /**
   * Live sessions allowed at once; an `initialize` beyond it gets HTTP 503.
   * Each session costs about 100 KiB until it is deleted or idles out.
   * @default 1000
   */
  readonly maxSessions?: number;
  /**
   * Live sessions one caller may hold at once (under OAuth each (iss, sub, client) is a caller; without it every
   * client is the one anonymous caller, whose limit is {@link HttpOptions.maxSessions}). An `initialize` beyond it
   * gets HTTP 503 naming this limit, so one caller cannot hold every session.
   * @default a quarter of maxSessions (at least 1) under OAuth
   */
  readonly maxSessionsPerCaller?: number;
  /**
   * 2025 session ids are `<prefix>.<uuid>`: a load balancer in front of
   * several front ends routes each session to the one that holds it by this
   * prefix (an nginx `map` on `$http_mcp_session_id`). 1 to 64 of
   * `A-Za-z0-9_-`. Without it, a bare UUID.
   */
  readonly sessionIdPrefix?: string;
  /** Origins accepted from browsers, besides same-host localhost origins. */
  readonly allowedOrigins?: readonly string[];
  readonly version: string;
  readonly wire: WireStats;
  /**
   * The backend's tasks, shared by every session and exchange of this server.
   * @default a runner of its own, with the defaults
   */
  readonly tasks?: TaskRunner;
  /**
   * The backend's parked 2026 calls (tools that asked the client), shared by every exchange of this server.
   * @default a registry of its own, with the defaults (closed with the server)
   */
  readonly inputWaits?: InputWaits;
  /**
   * OAuth authorization (src/transport/http/authorization.ts): every request needs an access token from its
   * issuer, and each (iss, sub, client) is a caller of its own. Instead of {@link HttpOptions.authToken}.
   */
  readonly authorization?: Authorization;
  /**
   * Deepest nesting of arrays and objects accepted in a body, as on stdio: a
   * deeper one is refused with HTTP 400 and `-32600`.
   * @default 128
   */
  readonly maxNestingDepth?: number;
  /**
   * Where a failure of the HTTP layer itself is logged (the client gets a bare
   * JSON-RPC internal error, never the stack).
   * @default an error line through the process logger (its level and format), without the stack
   */
  readonly log?: (line: string) => void;
  /**
   * Bounds the output held for clients that do not read it (../output-budget.ts), shared with every other
   * transport of the process.
   * @default a budget of its own with the defaults, counting into `wire`
   */
  readonly outputBudget?: OutputBudget;
  /** Requests it answers (returns true) skip MCP authentication: health and metrics (src/ops/health.ts). */
  readonly routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** A running HTTP server. */
export interface HttpMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp. */
  readonly url: string;
  /** Live sessions now. */
  sessions(): number;
  /** Closes every session (cancelling their calls) and the listener. */
  close(): Promise<void>;
}

/** A request past the chain's checks, with its parsed JSON body (undefined when it is not JSON). */
type Request = IncomingMessage & { body?: unknown };
type Response = ServerResponse;

/** A request header's first value. */
const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

interface Session {
  /** The caller that opened it: the only one that may use it (any other gets "unknown session"). */
  readonly caller: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly guard: GuardedTransport;
  readonly streams: ResponseStreams;
  lastSeen: number;
}

/** Serves MCP over Streamable HTTP at `/mcp`. */
export async function serveHttp(backend: CallBackend, options: HttpOptions): Promise<HttpMcpServer> {
  const host = options.host ?? DEFAULTS.host;
  checkExposure({
    host,
    authToken: options.authToken,
    allowUnauthenticated: options.allowUnauthenticated || options.authorization !== undefined,
  });
  const authorization = options.authorization;
  const maxSessions = options.maxSessions ?? DEFAULTS.maxSessions;
  const maxPerCaller = options.authorization
    ? Math.min(maxSessions, options.maxSessionsPerCaller ?? Math.max(1, Math.floor(maxSessions / 4)))
    : maxSessions;
  if (options.sessionIdPrefix !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(options.sessionIdPrefix))
    throw new RangeError('sessionIdPrefix: 1 to 64 of A-Za-z0-9_-');
  const tasks = options.tasks ?? new TaskRunner(backend);
  const inputWaits = options.inputWaits ?? new InputWaits(backend);
  /** The 2025 sessions, opening (counted against the limit) and live (only these have an id a client knows). */
  const sessions = new SessionTable<Session>(maxSessions, maxPerCaller);
  // The request chain, in order; each step answers the request or passes it on (plain node:http, no framework).
  const chain: HttpStep[] = [];
  const budget =
    options.outputBudget ?? new OutputBudget({ perStreamBytes: DEFAULTS.maxOutputBufferBytes, counters: options.wire });
  /** Every MCP response stream is watched until it ends: one its client does not read is closed, which cancels what it carries. */
  // In the process's log format (src/log/logger.ts), like every other line of the server.
  const log = options.log ?? ((line: string) => logger().error(line));
  const watched = (res: Response) => {
    const unwatch = budget.watch({ unread: () => res.writableLength, close: () => res.destroy(), capped: true });
    res.once('finish', unwatch);
    res.once('close', unwatch);
  };

  // An absolute-form target names the host the request is for: it replaces the Host header before the Host check.
  chain.push(requestTarget);
  // DNS rebinding: a page on another origin must not reach the server through a name it controls. Always on.
  chain.push(hostGuard(acceptedHostnames(host, options.allowedHosts)));
  chain.push(originCheck(options.allowedOrigins ?? []));
  const routes = options.routes;
  if (routes) chain.push((req, res, next) => void (routes(req, res) || next()));
  // Before the body is read: a client without the token costs no parsing.
  if (authorization) chain.push(authorization.gate);
  else if (options.authToken !== undefined) chain.push(bearerAuth(options.authToken));
  const bodyLimit = options.maxMessageBytes ?? DEFAULTS.maxMessageBytes;
  const maxDepth = options.maxNestingDepth ?? DEFAULTS.maxNestingDepth;
  // Without OAuth every client is the one caller, who may then use every decode slot.
  const decodeSlots = new DecodeSlots(
    DEFAULTS.maxDecodes,
    authorization ? DEFAULTS.maxDecodesPerCaller : DEFAULTS.maxDecodes,
  );

  // 2026: one server and guard per request; its tasks belong to the caller (one token, one principal).
  const caller =
    options.authToken === undefined
      ? 'caller:anonymous'
      : `caller:${createHash('sha256').update(options.authToken).digest('hex').slice(0, 16)}`;
  // With OAuth, the token's caller instead (the SDK's Node adapter hands the factory the gate's req.auth).
  const store = tasks.store instanceof MemoryTaskStore ? tasks.store : undefined;
  // What executor://stats shows a caller as its own: under OAuth its lane, tasks and sessions; without, the one
  // caller holds everything, so its counts are the totals.
  const countsOf = (who: string): CallerCounts =>
    authorization
      ? {
          queued: backend.queuedOf?.(who) ?? 0,
          ...(store && { tasksWorking: store.workingOf(who) }),
          sessions: sessions.heldBy(who),
        }
      : { queued: backend.stats().queued, tasksWorking: tasks.stats().tasksWorking, sessions: sessions.size };
  const callers = new CallerBook(countsOf, authorization ? undefined : () => 'anonymous');
  const callerStats = (who: string) => (authInfo: AuthInfo | undefined) =>
    callers.section(who, authorization?.isOperator(authInfo) ?? false);
  /** The method each 2026 exchange's request carries, by its web Request (what the SDK hands the factory). */
  const exchangeMethods = new WeakMap<globalThis.Request, string>();
  const modern = createMcpHandler(
    (ctx) => {
      const who = requestCaller({ auth: ctx.authInfo } as AuthorizedRequest, caller);
      const method = ctx.requestInfo && exchangeMethods.get(ctx.requestInfo);
      return createMcpServer(
        backend,
        options.wire,
        options.version,
        (transport: Transport) => ({
          guard: new GuardedTransport(transport, `modern/${randomUUID()}`, backend, options.wire, {
            caller: who,
            inputWaits,
            tasks,
            closeReason: CLIENT_DISCONNECTED,
            closeSource: 'closed_stream',
            ...(authorization && { turn: who }),
          }),
          wraps: true,
          caller: who,
          callerStats: callerStats(who),
        }),
        tasks,
        method === undefined ? {} : { method },
      );
    },
    { legacy: 'reject', maxRequestBodySize: options.maxMessageBytes ?? DEFAULTS.maxMessageBytes },
  );
  const serveModern = nodeHandler(modern);
  const modernInFlight = new ModernInFlight(authorization !== undefined, log);

  async function post(req: Request, res: Response): Promise<void> {
    watched(res);
    // A POST to the endpoint carries JSON-RPC: any other body is refused unread (415), not taken for a missing session.
    if (!isJson(req))
      return void rpcError(
        res,
        415,
        ErrorCode.InvalidRequest,
        `unsupported content type ${JSON.stringify(escapeForLog(header(req, 'content-type') ?? '(none)', 64))}: POST /mcp takes application/json`,
      );
    try {
      req.body = await readJsonBody(req, bodyLimit, maxDepth, {
        slots: decodeSlots,
        caller: requestCaller(req, caller),
      });
    } catch (error) {
      if (error instanceof BodyError) return bodyError(res, error);
      throw error;
    }
    callers.saw(requestCaller(req, caller));
    const malformed = malformedMessages(req.body);
    if (malformed) return sendJson(res, 400, malformed);
    const short = await authorization?.scopeChallenge(req.body, (req as AuthorizedRequest).auth);
    if (short) return send(res, short);
    const sid = header(req, 'mcp-session-id');
    const web = sid ? undefined : abortableRequest(req, res);
    if (web && !(await isLegacyRequest(web, req.body))) {
      const message = Array.isArray(req.body)
        ? undefined
        : (req.body as { method?: unknown; id?: unknown; params?: unknown } | null);
      const method = message?.method;
      if (typeof method === 'string' && message) {
        if (method === 'notifications/cancelled' && message.id === undefined) {
          const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
          return modernInFlight.cancel(requestCaller(req, caller), requestId, res);
        }
        exchangeMethods.set(web, method);
        if (typeof message.id === 'string' || typeof message.id === 'number')
          modernInFlight.track(requestCaller(req, caller), message.id, res);
      }
      // SSE answers must reach the client as they are written, through any buffering proxy.
      res.setHeader('X-Accel-Buffering', 'no');
      return serveModern(req, res, req.body, web);
    }
    const session = sid ? owned(sid, req) : undefined;
    if (session) {
      const guard = session.guard;
      const duplicates = duplicateRequests(req.body, guard.session, (id) => guard.calls.isInFlight(id));
      if (duplicates) return sendJson(res, 400, duplicates);
      return handlePost(session, req, res);
    }
    if (sid) return void rpcError(res, 404, ErrorCode.InvalidRequest, 'unknown or expired session');
    if (!isInitializeRequest(req.body))
      return void rpcError(
        res,
        400,
        ErrorCode.InvalidRequest,
        'no session: send initialize first, without mcp-session-id',
      );
    const slot = sessions.open(requestCaller(req, caller));
    if (slot === 'owner-limit') {
      const message = `session limit of this caller reached: ${maxPerCaller} live sessions (--max-sessions-per-caller); end unused sessions with DELETE or retry later`;
      return void rpcError(res, 503, SERVER_BUSY, message, requestsIn(req.body)[0]?.id ?? null);
    }
    if (slot === 'server-limit') {
      const message = `session limit reached: ${maxSessions} live sessions (--max-sessions); end unused sessions with DELETE or retry later`;
      return void rpcError(res, 503, SERVER_BUSY, message, requestsIn(req.body)[0]?.id ?? null);
    }
    let fresh: Session | undefined;
    try {
      fresh = await openSession(slot.owner, slot);
      await handlePost(fresh, req, res);
    } finally {
      // The transport refused the initialize (wrong Accept or Content-Type, a batch, …): the client never learnt an id.
      if (slot.state === 'opening') {
        slot.close();
        await fresh?.transport.close();
      }
    }
  }

  async function handlePost(session: Session, req: Request, res: Response): Promise<void> {
    session.lastSeen = Date.now();
    const requests = requestsIn(req.body);
    res.once('close', session.streams.opened(requests.map((r) => r.id)));
    cancelOnDisconnect(res, requests, session.guard);
    await session.transport.handleRequest(req, res, req.body);
  }

  const existing = async (req: Request, res: Response) => {
    const sid = header(req, 'mcp-session-id');
    // Without a 2025 session there is nothing to GET or DELETE: 2026 has neither a GET stream nor sessions.
    if (!sid)
      return sendJson(
        res,
        405,
        errorResponse(
          null,
          ErrorCode.InvalidRequest,
          'Method not allowed: GET and DELETE need a 2025-11-25 session (Mcp-Session-Id)',
        ),
        { allow: 'POST' },
      );
    const session = owned(sid, req);
    if (!session) return void rpcError(res, 404, ErrorCode.InvalidRequest, 'unknown or expired session');
    session.lastSeen = Date.now();
    watched(res); // a GET stream: a 2025 session's notifications, and the answers of its tasks' requests
    await session.transport.handleRequest(req, res);
  };
  /** The endpoint's routes: POST, GET and DELETE on /mcp (any case, one trailing slash allowed). */
  const endpoint = async (req: Request, res: Response): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.toLowerCase().replace(/(.)\/$/, '$1');
    if (path === '/mcp' && req.method === 'POST') return post(req, res);
    if (path === '/mcp' && (req.method === 'GET' || req.method === 'DELETE')) return existing(req, res);
    return rpcError(
      res,
      404,
      ErrorCode.InvalidRequest,
      `not found: ${req.method ?? '?'} ${path} (the MCP endpoint is POST, GET or DELETE /mcp)`,
    );
  };
  const handle = (req: Request, res: Response): void => {
    // Whatever answered a request without reading its body (a refusal, the SDK's 415): the rest is not read.
    closeUnreadAfterAnswer(req, res);
    let step = 0;
    const next = (): void => {
      const current = chain[step++];
      if (current) return current(req, res, next);
      endpoint(req, res).catch((error: unknown) => {
        // A handler that failed: one JSON-RPC error if nothing was sent yet, never a stack trace to the client.
        // The stack goes to the log, never to the client (it holds the server's paths).
        // One line, the request's method and target escaped and capped; the stack only at debug level (a client able to
        // cause the failure must not fill the log with stacks).
        const message = error instanceof Error ? error.message : String(error);
        log(`http: ${escapeForLog(req.method ?? '?', 16)} ${escapeForLog(req.url ?? '', 256)} failed: ${message}`);
        if (error instanceof Error && error.stack && logger().debugOn) logger().debug(error.stack);
        if (!res.headersSent) rpcError(res, 500, ErrorCode.InternalError, 'internal error');
        else res.destroy();
      });
    };
    next();
  };

  /** The session `sid` if the request's caller opened it: to anyone else it does not exist. */
  function owned(sid: string, req: Request): Session | undefined {
    const session = sessions.get(sid);
    return session && session.caller === requestCaller(req, caller) ? session : undefined;
  }

  /** Builds a session for `owner`; it becomes reachable by its id only once the transport accepts its initialize. */
  async function openSession(owner: string, slot: SessionSlot<Session>): Promise<Session> {
    const id = options.sessionIdPrefix === undefined ? randomUUID() : `${options.sessionIdPrefix}.${randomUUID()}`;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => void slot.accept(id, session),
    });
    const streams = new ResponseStreams(transport);
    const guard = new GuardedTransport(transport, id, backend, options.wire, {
      hooks: { cancelled: (requestId) => streams.cancelled(requestId) },
      afterAnswered: (requestId) => streams.answered(requestId),
      inputWaits,
      tasks,
      ...(authorization && { turn: owner }),
    });
    const server = createMcpServer(
      backend,
      options.wire,
      options.version,
      () => ({ guard, wraps: false, caller: owner, callerStats: callerStats(owner) }),
      tasks,
    );
    const session: Session = { caller: owner, transport, guard, streams, lastSeen: Date.now() };
    // Under OAuth a caller's sessions share its per-caller task limit with its 2026 tasks.
    if (authorization) tasks.store.countAs?.(id, owner);
    // The session is gone: so are its tasks.
    guard.onOwnerClosed = () => {
      slot.close();
      void tasks.closeOwner(id);
      tasks.store.uncount?.(id);
    };
    await server.connect(guard);
    return session;
  }

  const idleMs = options.sessionIdleMs ?? DEFAULTS.sessionIdleMs;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions.entries()) {
        // A session holding tasks stays open until they expire: its client may come back for them.
        if (now - s.lastSeen > idleMs && backend.callsInFlight(id) === 0 && !tasks.holdsTasks(id))
          void s.transport.close();
      }
    },
    Math.min(idleMs, DEFAULTS.sessionSweepMs),
  );
  sweeper.unref();

  const listener: HttpServer = await new Promise((resolve, reject) => {
    const srv = createServer(
      {
        // Slow-drip headers and bodies: the whole request within a bound (json-body.ts also refuses a slow body).
        headersTimeout: DEFAULTS.headersTimeoutMs,
        requestTimeout: DEFAULTS.requestTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      handle,
    );
    // A listen error (EADDRINUSE, …) rejects; the CLI turns it into one line.
    srv.once('error', reject);
    srv.listen(options.port ?? DEFAULTS.port, host, () => {
      srv.off('error', reject);
      resolve(srv);
    });
  });
  const { port } = listener.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      await Promise.all(sessions.entries().map(([, s]) => s.transport.close()));
      await modern.close();
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        listener.closeAllConnections();
      });
      if (!options.inputWaits) inputWaits.close();
      authorization?.close();
      if (!options.outputBudget) budget.close();
    },
  };
}

/**
 * The newer MCP revision: a client that disconnects the response stream of a
 * pending POST has cancelled the requests it carried.
 */
function cancelOnDisconnect(
  res: Response,
  requests: readonly { id: RequestId; method: string }[],
  guard: GuardedTransport,
): void {
  const ids = requests.filter((r) => r.method === 'tools/call').map((r) => r.id);
  if (ids.length === 0) return;
  res.once('close', () => {
    if (res.writableFinished) return;
    for (const id of ids) guard.calls.cancel(id, CLIENT_DISCONNECTED, 'closed_stream');
  });
}

/** The JSON-RPC requests in a POST body (one message or a batch); the transport validates the rest. */
function requestsIn(body: unknown): { id: RequestId; method: string }[] {
  const requests: { id: RequestId; method: string }[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    const msg = m as { method?: unknown; id?: unknown } | null;
    if (typeof msg?.method === 'string' && (typeof msg.id === 'string' || typeof msg.id === 'number'))
      requests.push({ id: msg.id, method: msg.method });
  }
  return requests;
}
