/**
 * The MCP server object for one connection (2025) or one request (2026 over
 * HTTP): tools/list from the tool definitions, tools/call through the
 * connection's {@link ToolCalls}, and the `executor://stats` resource. One
 * factory serves both eras; the SDK tells them apart, our guard sits under
 * every instance ({@link GuardedServer}).
 */
import {
  ProtocolErrorCode,
  Server,
  type BaseContext,
  type MessageExtraInfo,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { BackendStats, CallBackend } from '../backend/backend.js';
import type { GuardedTransport, WireStats } from './guard.js';
import type { ConnectionCalls } from './call-lifecycle.js';
import { eraOf, registerTaskHandlers, TASK_CAPABILITIES, TASKS_EXTENSION } from '../tasks/handlers.js';
import { TaskRunner, type TaskStats } from '../tasks/runner.js';
import type { InputWaits, InputWaitStats } from '../asks/input-waits.js';
import { executionOf } from '../tasks/task-support.js';
import { invalidParams, wireError } from './wire-errors.js';
import { routeRequestsDirectly } from './request-route.js';
import { plainlyValidResult } from './result-shape.js';
import { isCancelledCall } from './tool-calls.js';
import { tracedHandler, type JoinOf, type JoinReason, type Joined, type RequestLog } from '../otel/server-span.js';
import { logger } from '../log/logger.js';
import { spanContextOf } from '../otel/carrier.js';
import type { AuthInfo, CallToolResult } from '@modelcontextprotocol/server';
import type { CallerSection } from './caller-stats.js';

export { SERVER_BUSY } from './wire-errors.js';

/** The stats resource's URI. */
export const STATS_URI = 'executor://stats';

/** The stats resource as `resources/list` shows it (an embedding pool registers the same one: src/embed). */
export const STATS_RESOURCE = {
  uri: STATS_URI,
  name: 'stats',
  title: 'Executor counters',
  mimeType: 'application/json',
  description:
    'Tool-call counters: completed, cancelled, failed, timedOut, running, queued, hardKilled, lateCancelsIgnored, responsesDropped, …',
} as const;

/** The `resources/read` answer for the stats resource (with the reader's own counts over HTTP: {@link CallerSection}). */
export function statsContents(stats: ServerStats & Partial<CallerSection>): {
  contents: { uri: string; mimeType: string; text: string }[];
} {
  return { contents: [{ uri: STATS_URI, mimeType: STATS_RESOURCE.mimeType, text: JSON.stringify(stats) }] };
}

/** The protocol revisions this server speaks: the 2026 one, and the 2025 ones a legacy client may open with. */
export const SUPPORTED_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

/** Everything `executor://stats` reports. */
export type ServerStats = BackendStats & WireStats & TaskStats & InputWaitStats;

/** Reads the combined counters. */
export function serverStats(
  backend: CallBackend,
  wire: WireStats,
  tasks: TaskRunner,
  inputWaits: InputWaits,
): ServerStats {
  return { ...backend.stats(), ...wire, ...tasks.stats(), ...inputWaits.stats() };
}

/** One `tools/list` entry. */
export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: Record<string, unknown>;
  execution: { taskSupport: 'forbidden' | 'optional' | 'required' };
}

// A backend's tools never change, and the stateless 2026 HTTP path builds a server per request: converting every
// tool's zod schemas to JSON Schema there was the main thread's top cost under load (issue 53's profile). Once per
// backend, then shared (read-only) by every server built on it.
const listedByBackend = new WeakMap<CallBackend, readonly ListedTool[]>();

/** A request's debug line goes to the logger while debug is on (read per request: the level may change). */
const requestLog: RequestLog = () => {
  const log = logger();
  return log.debugOn ? log : undefined;
};

/** The `tools/list` entries of a backend's tools, computed once per backend. */
export function listedTools(backend: CallBackend): readonly ListedTool[] {
  let listed = listedByBackend.get(backend);
  if (!listed) listedByBackend.set(backend, (listed = convertTools(backend)));
  return listed;
}

function convertTools(backend: CallBackend): ListedTool[] {
  return [...backend.tools.values()].map((tool) => ({
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as ListedTool['inputSchema'],
    ...(tool.output && {
      outputSchema: z.toJSONSchema(tool.output, { io: 'output' }) as NonNullable<ListedTool['outputSchema']>,
    }),
    ...(tool.annotations && { annotations: tool.annotations }),
    execution: executionOf(tool),
  }));
}

/**
 * An SDK server whose transport is always under a guard: `connect` asks its
 * scope which guard goes with the transport the serving entry hands it, and
 * wraps it unless that transport already sits above the guard (stdio's
 * connection channel, whose wire is the guard).
 */
export class GuardedServer extends Server {
  /** This instance's guard and caller, once connected. */
  scope: ServerScope | undefined;
  /** The connection's calls (its guard's table), once connected: every handler reaches a call through it. */
  calls: ConnectionCalls | undefined;
  /** The tasks its tasks/* requests name (set by {@link createMcpServer}), for their spans to join the creating call's trace. */
  tasks: TaskRunner | undefined;

  constructor(
    info: { name: string; version: string },
    options: ConstructorParameters<typeof Server>[1],
    private readonly scopeOf: (transport: Transport) => ServerScope,
  ) {
    super(info, options);
  }

  override connect(transport: Transport): Promise<void> {
    const scope = this.scopeOf(transport);
    this.scope = scope;
    this.calls = scope.guard.calls;
    if (this.tasks) this.calls.serveWith({ tasks: this.tasks, sdk: this });
    const wire = scope.wraps ? scope.guard : transport;
    const before = wire.onmessage;
    const connected = super.connect(wire);
    routeRequestsDirectly(this, wire, before);
    return connected;
  }

  /**
   * The context the SDK's own `buildContext` makes, made without copying: that one spreads the request's context
   * and its `mcpReq` into new objects on every request, an item of every call's main-thread time (BENCHMARKS.md,
   * section 3, eighth pass). The request's own objects get the server's three methods instead; `log`, which needs
   * the SDK's private level table, makes the SDK's own context on its first call and keeps it.
   */
  protected override buildContext(ctx: BaseContext, info?: MessageExtraInfo): ServerContext {
    const full = ctx as ServerContext;
    const req = full.mcpReq;
    let sdk: ServerContext | undefined;
    req.log = (level, data, logger) => (sdk ??= super.buildContext(ctx, info)).mcpReq.log(level, data, logger);
    req.elicitInput = (params, options) => this.elicitInput(params, options);
    req.requestSampling = (params, options) => this.createMessage(params, options);
    if (ctx.http || info?.request || info?.closeSSEStream || info?.closeStandaloneSSEStream) {
      full.http = {
        ...ctx.http,
        req: info?.request,
        closeSSE: info?.closeSSEStream,
        closeStandaloneSSE: info?.closeStandaloneSSEStream,
      };
    }
    return full;
  }

  /**
   * The SDK checks every `tools/call` result against its era's CallToolResult schema. Two kinds of answer skip
   * that check: a task answer, which is not a CallToolResult (2025 `{ task }`, 2026 the flat `CreateTaskResult`),
   * and a result already seen to be plainly valid ({@link plainlyValidResult}), which the check would only repeat.
   * The SDK offers no way past it, so it is handed {@link STAND_IN}, which it checks in a fraction of the time,
   * and the answer itself is put back once it has. (Throwing the answer past the check instead cost as much as
   * the check: three async frames unwound per call. BENCHMARKS.md, eleventh pass on issue 24.)
   */
  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    // Outermost: the server span sees the answer that is sent, and the handler runs inside it (src/otel/server-span.ts).
    return tracedHandler(
      method,
      this.checkedHandler(method, handler),
      () => this.getNegotiatedProtocolVersion(),
      isCancelledCall,
      this.joinOf(method),
      requestLog,
    );
  }

  /**
   * What a request of `method` continues (src/otel/server-span.ts): a 2026
   * retry round its call's first round, a tasks/* request its task's
   * creating call. Read when the request arrives (the scope is set on connect).
   */
  private joinOf(method: string): JoinOf | undefined {
    if (method === 'tools/call')
      return (_request, ctx) => joined(this.calls?.firstRoundOf(ctx.mcpReq.id), 'first_round');
    if (method !== 'tasks/get' && method !== 'tasks/result' && method !== 'tasks/cancel' && method !== 'tasks/update')
      return undefined;
    return (request, ctx) => {
      const taskId = request.params?.taskId;
      const scope = this.scope;
      if (typeof taskId !== 'string' || !scope || !this.tasks) return undefined;
      // The owner the handler will read it as (tasks/handlers.ts): another owner's task is not joined.
      return joined(this.tasks.traceOf(eraOf(ctx) === 'legacy' ? scope.guard.session : scope.caller, taskId), 'task');
    };
  }

  private checkedHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    // Keyed by the request object, which the SDK hands unchanged to the handler it wraps.
    const answers = new WeakMap<object, Answer>();
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (!isTaskAnswer(result) && !plainlyValidResult(result)) return result;
      answers.set(request, result);
      return STAND_IN;
    });
    // A plain function and one then, not another async layer: this runs on every call.
    return (request, ctx) =>
      checked(request, ctx).then((validated) => {
        const answer = answers.get(request);
        if (answer === undefined) return validated;
        answers.delete(request);
        return answer;
      });
  }
}

/** What a `tools/call` handler resolves with. */
type Answer = Awaited<ReturnType<ReturnType<Server['_wrapHandler']>>>;

/** The empty result the SDK checks in place of an answer that needs no check (see {@link GuardedServer}); never sent. */
const STAND_IN: Answer = Object.freeze({ content: [] });

/** A kept traceparent (or the promise of one) as what a span joins. */
function joined(
  traceparent: string | undefined | Promise<string | undefined>,
  reason: JoinReason,
): Joined | undefined | Promise<Joined | undefined> {
  const of = (t: string | undefined): Joined | undefined => {
    const spanContext = spanContextOf(t);
    return spanContext && { spanContext, reason };
  };
  return traceparent instanceof Promise ? traceparent.then(of) : of(traceparent);
}

function isTaskAnswer(result: object): boolean {
  const r = result as { task?: unknown; resultType?: unknown };
  return r.resultType === 'task' || (typeof r.task === 'object' && r.task !== null);
}

/** What one server instance is for. */
export interface ServerScope {
  /** The guard under this instance (one connection, or one 2026 HTTP exchange). */
  readonly guard: GuardedTransport;
  /** Whether the guard wraps the transport given to `connect` (false: the guard is already beneath it). */
  readonly wraps: boolean;
  /** Who owns the 2026 tasks this instance creates: the caller (the token's principal over HTTP, the connection over stdio). */
  readonly caller: string;
  /** Over HTTP: the reader's own counts for `executor://stats` (and every caller's for an operator's token). */
  readonly callerStats?: (authInfo: AuthInfo | undefined) => CallerSection;
}

/** Options for {@link createMcpServer}. */
export interface CreateServerOptions {
  /**
   * The one request method this server will answer (a 2026 HTTP exchange carries one request): only its handler is
   * registered. Without it, every handler (a connection, which serves many requests).
   */
  readonly method?: string;
}

/**
 * Builds the SDK server for one connection or exchange. `scopeOf` is called
 * with the transport the entry connects, and names the guard that goes with it.
 * `tasks` must be the one runner every server of this backend shares (the
 * default, a runner of this server's own, suits a single connection).
 */
export function createMcpServer(
  backend: CallBackend,
  wire: WireStats,
  version: string,
  scopeOf: (transport: Transport) => ServerScope,
  tasks: TaskRunner = new TaskRunner(backend),
  options: CreateServerOptions = {},
): Server {
  // A 2026 exchange's server answers one request: the SDK wraps every handler it is given in closures of its own,
  // which made up most of the memory a 2026 call in flight holds (issue 53: 14 handlers per exchange).
  const only = options.method;
  const wanted = (method: string) => only === undefined || only === method;
  const server: GuardedServer = new GuardedServer(
    { name: 'mcp-cancel-pool', version },
    {
      capabilities: {
        tools: {},
        resources: {},
        logging: {},
        tasks: TASK_CAPABILITIES,
        extensions: { [TASKS_EXTENSION]: {} },
      },
      supportedProtocolVersions: SUPPORTED_VERSIONS,
      instructions:
        'CPU-heavy tools run on a worker pool. Cancel a call (notifications/cancelled, or over 2026 HTTP by closing its response stream) and its work stops at the next checkpoint; nothing more is sent for it.',
    },
    (transport) => {
      const s = scopeOf(transport);
      server.tasks = tasks;
      registerTaskHandlers(server, tasks, s.guard.session, s.caller, only);
      return s;
    },
  );
  const listed = listedTools(backend);
  if (wanted('tools/list')) server.setRequestHandler('tools/list', () => ({ tools: listed }) as never);

  // Replaces the SDK's own handler, whose level only its sendLoggingMessage reads; that sends without
  // relatedRequestId, off the call's HTTP stream. (2025 only: the SDK refuses it on a 2026 request.)
  if (wanted('logging/setLevel'))
    server.setRequestHandler('logging/setLevel', (request) => {
      if (server.calls) server.calls.logLevel = request.params.level;
      return {};
    });

  if (wanted('tools/call'))
    server.setRequestHandler('tools/call', (request, ctx) => {
      // What kind of call it is was decided once, as it arrived (ToolCalls.admit).
      if (!server.calls) throw invalidParams('not connected');
      return server.calls.handle(request, ctx) as Promise<CallToolResult>;
    });

  if (wanted('resources/list')) server.setRequestHandler('resources/list', () => ({ resources: [STATS_RESOURCE] }));

  // No templates, but a client that lists resources lists templates too (the Inspector shows an error on -32601).
  if (wanted('resources/templates/list'))
    server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));

  if (wanted('resources/read'))
    server.setRequestHandler('resources/read', (request, ctx) => {
      // SEP-2164: the error SHOULD name the resource in data.uri.
      if (request.params.uri !== STATS_URI)
        throw wireError(ProtocolErrorCode.InvalidParams, `unknown resource ${request.params.uri}`, {
          uri: request.params.uri,
        });
      if (!server.calls || !server.scope) throw invalidParams('not connected');
      return statsContents({
        ...serverStats(backend, wire, tasks, server.calls.inputWaits),
        ...server.scope.callerStats?.(ctx.http?.authInfo),
      });
    });

  return server;
}
