#!/usr/bin/env node
/**
 * The command line: `mcp-cancel-pool serve` runs the MCP server. Everything
 * human-readable goes to stderr; over stdio, stdout carries only JSON-RPC.
 */
import './fast-schemas.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { Executor } from '../executor/executor.js';
import { newWireStats } from '../server/guard.js';
import { AUTH_TOKEN_ENV, checkExposure, HttpConfigError, isLoopback, loadAuthToken } from '../transport/http/access.js';
import { authorizationConfig, type AuthorizationConfig } from '../transport/http/authorization-config.js';
import { serveStdio } from '../transport/stdio/serve.js';
import type { InputWaits } from '../asks/input-waits.js';
import { readKeyFile } from '../asks/request-state.js';
import { listServeOptionsInHelp } from './help.js';
import { registerInitTools } from './init-tools.js';
import { registerCheckTools } from './check-tools.js';
import { checkToolModule } from './tool-modules.js';
import { describeBackend, openQueueBackend } from './serve-remote.js';
import { redisConfigOf, redisOptions, type RedisFlags } from './redis-flags.js';
import { serveInputWaits, serveTasks } from './serve-tasks.js';
import { UsageError } from './usage-error.js';
import { MissingPeerError } from '../peers.js';
import { checkSwitchesInEnv, EnvCommand, hostArg, refuseInapplicable, startupErrorLine } from './config.js';
import { poolOptions } from './pool-options.js';
import { DEFAULTS } from '../defaults.js';
import type { ToolPriority } from '../pool/protocol.js';
import { instrumentBackend } from '../ops/instrument.js';
import { frontEndOps, RedisProbe } from '../ops/ops.js';
import { serveHealth } from '../ops/health.js';
import { logger, type LogFormat, type LogLevel } from '../log/logger.js';
import { configureLogging, logOptions } from './log-options.js';
import { describeTelemetry, startTelemetry, type Telemetry } from '../otel/sdk.js';
import { OutputBudget } from '../transport/output-budget.js';
// Registers the jobs' spans with the executor (src/executor/job-tracing.ts), which imports nothing of otel/.
import '../otel/job-trace.js';

const version = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function log(message: string): void {
  logger().info(message);
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function int(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER ? `expected an integer >= ${min}` : `expected an integer from ${min} to ${max}`,
      );
    return n;
  };
}
const port = int(0, 65535);

function sessionPrefix(value: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) throw new InvalidArgumentError('1 to 64 letters, digits, - or _');
  return value;
}

interface ServeFlags extends RedisFlags {
  transport: 'stdio' | 'http';
  threads?: number;
  spareThreads: number;
  cores?: number;
  handoffDelayMs: number;
  queueLimit: number;
  queueLimitPerCaller?: number;
  graceMs: number;
  host: string;
  port: number;
  tools: string[];
  builtins: boolean;
  root: string;
  maxMessageBytes: number;
  maxOutputBufferBytes: number;
  maxUnreadOutputBytes: number;
  unreadTimeoutMs: number;
  workerMemoryMb?: number;
  sessionIdleMs: number;
  sessionPrefix?: string;
  allowedHost: string[];
  allowedOrigin: string[];
  maxSessions: number;
  maxSessionsPerCaller?: number;
  authTokenFile?: string;
  allowUnauthenticated: boolean;
  authIssuer?: string;
  authResource?: string;
  authScopes?: string;
  authIntrospectionEndpoint?: string;
  authClientCredentialsFile?: string;
  authAnyJwtType: boolean;
  authRequireAtJwt: boolean;
  authOperatorScope?: string;
  maxWorkingTasksPerSession: number;
  maxWorkingTasks: number;
  maxFinishedTaskBytes: number;
  taskTtlMs: number;
  maxTaskTtlMs: number;
  inputWaitMs: number;
  mrtrKeyFile?: string;
  taskAfterMs: number;
  taskLeaseMs?: number;
  taskLeaseClientTasks: boolean;
  toolPriority: ToolPriority;
  healthPort?: number;
  healthHost: string;
  healthAuth: boolean;
  onStdinClose: 'cancel' | 'finish';
  drainTimeoutMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

const program = new EnvCommand()
  .name('mcp-cancel-pool')
  .description(
    'An MCP server that runs CPU-heavy tools on a worker pool, with cancellation that stops the work and never answers a cancelled call.',
  )
  .version(version);

const serve = program
  .command('serve')
  .description('Run the MCP server (stdio by default).')
  .addOption(
    new Option('--transport <kind>', 'stdio or http (Streamable HTTP at /mcp)')
      .choices(['stdio', 'http'])
      .default('stdio'),
  )
  .option('--threads <n>', 'worker threads (default: available CPUs)', int(1))
  .option(
    '--spare-threads <n>',
    'warm standby threads: a cancelled call hands its slot to the next call, while it winds down on its own thread (0 = wait for it)',
    int(0),
    DEFAULTS.spareThreads,
  )
  .option(
    '--cores <n>',
    'cores the workers may use: the slot passes to the standby at once only while one is free (default: available CPUs)',
    int(1),
  )
  .option(
    '--handoff-delay-ms <ms>',
    'with every core busy, how long a cancelled call may take to stop before its slot passes to the standby anyway (0 = at once)',
    int(0),
    DEFAULTS.handoffDelayMs,
  )
  .option(
    '--queue-limit <n>',
    'calls allowed to wait for a worker; beyond it a call fails at once with "server busy"',
    int(0),
    DEFAULTS.queueLimit,
  )
  .option(
    '--queue-limit-per-caller <n>',
    'HTTP, with --auth-issuer: calls one caller may have waiting for a worker, checked before --queue-limit (default half of it); beyond it a call fails at once with "server busy: per-caller queue share reached"',
    int(0),
  )
  .option(
    '--grace-ms <ms>',
    'how long a cancelled call may run past its checkpoints before its worker is terminated and replaced',
    int(0),
    DEFAULTS.graceMs,
  )
  .option(
    '--host <host>',
    'HTTP: interface to bind (an IPv6 address with or without brackets); anything but loopback needs a token or --allow-unauthenticated',
    hostArg,
    DEFAULTS.host,
  )
  .option('--port <port>', 'HTTP: port (0 = any free port)', port, DEFAULTS.port)
  .option(
    '--tools <module>',
    'load tools from this module (repeatable); see docs/tools.md "Writing your own tools"',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option('--no-builtins', 'do not load the built-in tools')
  .option('--root <dir>', 'directory the file tools may read (hash_file, compress)', process.cwd())
  .option('--max-message-bytes <n>', 'largest accepted JSON-RPC message', int(1024), DEFAULTS.maxMessageBytes)
  .option(
    '--max-output-buffer-bytes <n>',
    'unread output a response stream may hold: over stdio stdin is not read (no new work) above it until the client reads again; an HTTP response holding more whose client reads nothing for a second is closed, cancelling what it carries',
    int(65536),
    DEFAULTS.maxOutputBufferBytes,
  )
  .option(
    '--max-unread-output-bytes <n>',
    'unread output all response streams together may hold; past it the streams whose client reads nothing are closed (cancelling what they carry), the longest stalled first',
    int(1024 * 1024),
    DEFAULTS.maxUnreadOutputBytes,
  )
  .option(
    '--unread-timeout-ms <ms>',
    'how long a response stream (stdio, an HTTP response) holding unread output may go without its client reading any, before it is closed, cancelling what it carries',
    int(100),
    DEFAULTS.unreadTimeoutMs,
  )
  .addOption(
    new Option(
      '--tool-priority <class>',
      'normal, or idle: tool threads in SCHED_IDLE (Linux), preempted at once by the server\'s own thread; for machines that are there for the tools (see docs/serving.md "Command line"); with --redis, set it on the worker hosts',
    )
      .choices(['normal', 'idle'])
      .default(DEFAULTS.toolPriority)
      .conflicts('redis'),
  )
  .option(
    '--worker-memory-mb <n>',
    'V8 old-generation heap limit per worker, in MB; a call that exceeds it fails alone. Buffers, ArrayBuffers and native memory are not counted (see docs/serving.md "Command line")',
    int(16),
  )
  .option(
    '--session-idle-ms <ms>',
    'HTTP: close a session idle this long with nothing in flight',
    int(1000),
    DEFAULTS.sessionIdleMs,
  )
  .option(
    '--allowed-host <name>',
    "HTTP: accept this Host header (repeatable); without it, the localhost names and the bound address (on 0.0.0.0 or ::, this machine's addresses)",
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option(
    '--allowed-origin <origin>',
    'HTTP: accept requests from this browser Origin (repeatable)',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option(
    '--max-sessions <n>',
    'HTTP: live sessions allowed at once; beyond it initialize gets HTTP 503',
    int(1),
    DEFAULTS.maxSessions,
  )
  .option(
    '--max-sessions-per-caller <n>',
    'HTTP, with --auth-issuer: live sessions one caller may hold (default a quarter of --max-sessions); beyond it initialize gets HTTP 503',
    int(1),
  )
  .option(
    '--session-prefix <name>',
    'HTTP: 2025 session ids are <name>.<uuid>, so a load balancer routes each session to the front end that holds it (letters, digits, - and _; see docs/many-hosts.md "Many hosts")',
    sessionPrefix,
  )
  .option(
    '--auth-token-file <path>',
    `HTTP: require Authorization: Bearer <token>, the token read from this file (or set ${AUTH_TOKEN_ENV})`,
  )
  .option('--allow-unauthenticated', 'HTTP: serve a non-loopback --host without a token', false)
  .option(
    '--auth-issuer <url>',
    'HTTP: accept OAuth access tokens from this authorization server (its exact issuer identifier); each (iss, sub, client) is a caller of its own (see docs/operations.md "Authorization")',
  )
  .option(
    '--auth-resource <uri>',
    "HTTP, with --auth-issuer: this server's canonical URI (e.g. https://mcp.example.com/mcp); tokens must name it as their audience",
  )
  .option(
    '--auth-scopes <scopes>',
    'HTTP, with --auth-issuer: scopes every request needs (space- or comma-separated); tools may declare more',
  )
  .option(
    '--auth-introspection-endpoint <url>',
    "HTTP, with --auth-issuer: RFC 7662 introspection for opaque tokens (default: the issuer's, when --auth-client-credentials-file is given)",
  )
  .option(
    '--auth-client-credentials-file <path>',
    'HTTP, with --auth-issuer: JSON {"client_id", "client_secret"} this server authenticates with at the introspection endpoint',
  )
  .option(
    '--auth-any-jwt-type',
    'HTTP, with --auth-issuer: accept JWT access tokens of any typ header (by default JWT, at+jwt, application/at+jwt or none)',
    false,
  )
  .option(
    '--auth-require-at-jwt',
    'HTTP, with --auth-issuer: accept only JWT access tokens whose typ header is at+jwt (RFC 9068 strictness)',
    false,
  )
  .option(
    '--auth-operator-scope <scope>',
    'HTTP, with --auth-issuer: a token with this scope is an operator\'s: executor://stats shows it every caller\'s counts (see docs/operations.md "Per-caller limits")',
  )
  .option(
    '--max-working-tasks-per-session <n>',
    'working tasks one session may have (finished ones do not count); beyond it a task-augmented call gets -32000',
    int(1),
    DEFAULTS.maxWorkingTasksPerSession,
  )
  .option('--max-working-tasks <n>', 'working tasks all sessions together may have', int(1), DEFAULTS.maxWorkingTasks)
  .option(
    '--max-finished-task-bytes <n>',
    'bytes the finished tasks of all sessions keep until their ttl (task and result as JSON); past it the oldest finished are removed first (see docs/tasks.md "Tasks")',
    int(0),
    DEFAULTS.maxFinishedTaskBytes,
  )
  .option('--task-ttl-ms <ms>', 'ttl of a task whose request names none', int(1), DEFAULTS.taskTtlMs)
  .option(
    '--max-task-ttl-ms <ms>',
    'longest ttl granted to a task (a longer request is cut to it)',
    int(1),
    DEFAULTS.maxTaskTtlMs,
  )
  .option(
    '--input-wait-ms <ms>',
    '2026: a call answered input_required (its tool asked the client) waits this long for the retry (a task for its tasks/update), then is cancelled',
    int(1),
    DEFAULTS.inputWaitMs,
  )
  .option(
    '--mrtr-key-file <path>',
    '2026: HMAC-SHA256 key (at least 32 bytes) that signs requestState; by default a random key per process (see docs/serving.md "Eras: 2025-11-25 and 2026-07-28")',
  )
  .option(
    '--task-after-ms <ms>',
    "2026: a call of an 'optional' task tool from a client that declared the tasks extension becomes a task if it has not ended within ms (else it is answered directly); 0 = always a task",
    int(0),
    DEFAULTS.taskAfterMs,
  )
  .option(
    '--task-lease-ms <ms>',
    'a task the server made out of a plain call (--task-after-ms) is cancelled when no request has named it (tasks/get, tasks/result, tasks/update, tasks/cancel) for ms; 0 = off (default: max(60 s, 20 × the advertised pollInterval))',
    int(0),
  )
  .option(
    '--task-lease-client-tasks',
    'lease the tasks clients asked for too (by default their ttl alone governs them)',
    false,
  )
  .option(
    '--health-port <port>',
    'stdio: serve GET /healthz, /readyz and /metrics on this port (HTTP serves them on its own port)',
    port,
  )
  .option('--health-host <host>', 'with --health-port: interface to bind', hostArg, '127.0.0.1')
  .addOption(
    new Option(
      '--on-stdin-close <what>',
      'stdio: at the end of stdin, cancel the calls in flight, or finish them: answer every request already read (within --drain-timeout-ms), then exit',
    )
      .choices(['cancel', 'finish'])
      .default(DEFAULTS.onStdinClose),
  )
  .option(
    '--drain-timeout-ms <ms>',
    'with --on-stdin-close finish: how long the calls in flight may take to be answered; what is left then is cancelled',
    int(0),
    DEFAULTS.drainTimeoutMs,
  )
  .option(
    '--health-auth',
    'HTTP: /healthz, /readyz and /metrics need the bearer token too (by default they do not)',
    false,
  );
logOptions(program.commands.find((c) => c.name() === 'serve')!).action(async (flags: ServeFlags, command: Command) => {
  configureLogging(flags, 'mcp-cancel-pool');
  let authToken: string | undefined;
  let authConfig: AuthorizationConfig | undefined;
  if (flags.transport === 'http') {
    try {
      authToken = loadAuthToken(flags.authTokenFile);
      authConfig = authorizationConfig(flags);
      if (authConfig && authToken !== undefined)
        throw new HttpConfigError(
          `--auth-issuer and a shared token (--auth-token-file or ${AUTH_TOKEN_ENV}) exclude each other: give one`,
        );
      checkExposure({
        host: flags.host,
        authToken,
        allowUnauthenticated: flags.allowUnauthenticated || authConfig !== undefined,
      });
    } catch (error) {
      if (error instanceof HttpConfigError) command.error(`[mcp-cancel-pool] ${error.message}`);
      throw error;
    }
  }
  let mrtrKey: Buffer | undefined;
  try {
    mrtrKey = flags.mrtrKeyFile === undefined ? undefined : readKeyFile(flags.mrtrKeyFile);
  } catch (error) {
    command.error(`[mcp-cancel-pool] ${error instanceof Error ? error.message : String(error)}`);
  }
  for (const file of flags.tools) await checkToolModule(resolve(file));
  // Before the pool and the server: every call they handle is traced from its first request on.
  const telemetry: Telemetry | undefined = await startTelemetry('mcp-cancel-pool', logger());
  const queue = await openQueueBackend(flags);
  const backend =
    queue ??
    (await Executor.create({
      ...poolOptions(flags),
      ...(flags.cores !== undefined && { cores: flags.cores }),
      handoffDelayMs: flags.handoffDelayMs,
      queueLimit: flags.queueLimit,
      ...(flags.queueLimitPerCaller !== undefined && { queueLimitPerCaller: flags.queueLimitPerCaller }),
      ...(flags.workerMemoryMb !== undefined && { resourceLimits: { maxOldGenerationSizeMb: flags.workerMemoryMb } }),
    }));
  const local = backend instanceof Executor;
  const wire = newWireStats();
  // One bound for the output every client of the process leaves unread (docs/serving.md "Authentication and limits (HTTP)").
  const outputBudget = new OutputBudget({
    perStreamBytes: flags.maxOutputBufferBytes,
    totalBytes: flags.maxUnreadOutputBytes,
    unreadTimeoutMs: flags.unreadTimeoutMs,
    counters: wire,
    onClosed: (why, n) =>
      void (
        (n === 1 || n % 100 === 0) &&
        log(`closed a response stream whose client reads nothing (${why}); ${n} so far`)
      ),
  });
  let stopping = false;
  let sessions = () => 1;
  const redisLocation = redisConfigOf(flags);
  const redisProbe = redisLocation ? new RedisProbe(redisLocation, flags.queue) : undefined;
  let authorization: import('../transport/http/authorization.js').Authorization | undefined;
  if (authConfig) {
    const { Authorization } = await import('../transport/http/authorization.js');
    try {
      authorization = new Authorization(authConfig, backend.tools, log);
    } catch (error) {
      if (error instanceof HttpConfigError) command.error(`[mcp-cancel-pool] ${error.message}`);
      throw error;
    }
    // Unreachable is not fatal: /readyz says why until it answers, and discovery retries.
    await authorization.start();
  }
  const ops = frontEndOps(
    {
      stats: () => backend.stats(),
      taskStats: () => tasks.stats(),
      wire,
      sessions: () => sessions(),
      tools: new Set(backend.tools.keys()),
      ...(redisProbe && { redis: redisProbe }),
      ...(authorization && { authorization }),
      accepting: () => !stopping,
    },
    { local, scrapeable: flags.transport === 'http' || flags.healthPort !== undefined },
  );
  // The server sees the instrumented backend: it notes who asked for each cancel (metrics by source).
  const executor = instrumentBackend(backend, ops.metrics, { countCalls: !local });
  const tasks = serveTasks(queue, executor, flags, log);
  let inputWaits: InputWaits;
  try {
    inputWaits = serveInputWaits(queue, executor, flags.inputWaitMs, mrtrKey);
  } catch (error) {
    command.error(`[mcp-cancel-pool] ${(error as Error).message}`);
  }
  /** Stops serving; `cancelled` is what the close of a stdio connection cancelled (HTTP: counted here, before the close). */
  const stop = async (why: string, close: () => Promise<void>, cancelled?: { calls: number; tasks: number }) => {
    if (stopping) return;
    stopping = true;
    // Say what the shutdown stops: a script that closed stdin early learns its calls were cancelled, not lost.
    const { calls, tasks: working } = cancelled ?? {
      calls: Math.max(0, backend.stats().inFlight - tasks.stats().tasksWorking),
      tasks: tasks.stats().tasksWorking,
    };
    log(
      `shutting down (${why})${calls + working > 0 ? `: cancelled ${plural(calls, 'call')} in flight and ${plural(working, 'working task')}` : ''}`,
    );
    await close(); // cancels every in-flight call of every session
    await executor.close();
    inputWaits.close();
    ops.close();
    await telemetry?.shutdown(); // the spans of the calls just cancelled leave too
    // After stdin closed, answers written just before (--on-stdin-close finish) leave before the exit; bounded, for a
    // client that stopped reading. A signal exits at once: its client may never read again.
    if (why === 'stdin closed') {
      await new Promise<void>((done) => {
        setTimeout(done, 2000).unref();
        process.stdout.write('', () => done());
      });
    }
    process.exit(0);
  };
  if (flags.transport === 'http') {
    // Loaded only here: a stdio server never pays for Express and the HTTP transports at start.
    const { serveHttp } = await import('../transport/http/serve.js');
    const http = await serveHttp(executor, {
      host: flags.host,
      port: flags.port,
      maxMessageBytes: flags.maxMessageBytes,
      sessionIdleMs: flags.sessionIdleMs,
      allowedHosts: flags.allowedHost,
      allowedOrigins: flags.allowedOrigin,
      maxSessions: flags.maxSessions,
      ...(flags.maxSessionsPerCaller !== undefined && { maxSessionsPerCaller: flags.maxSessionsPerCaller }),
      ...(flags.sessionPrefix !== undefined && { sessionIdPrefix: flags.sessionPrefix }),
      ...(authToken !== undefined && { authToken }),
      ...(authorization && { authorization }),
      allowUnauthenticated: flags.allowUnauthenticated,
      version,
      wire,
      tasks,
      inputWaits,
      outputBudget,
      routes: ops.handler(flags.healthAuth ? authToken : undefined),
    });
    sessions = () => http.sessions();
    const oneCaller =
      'all HTTP clients are one caller (they share the task limits and fairness, and a task id is enough to reach a task; --auth-issuer gives each client its own identity)';
    if (authConfig) {
      const scopes = authConfig.requiredScopes.length > 0 ? `, scopes ${authConfig.requiredScopes.join(' ')}` : '';
      log(
        `HTTP: OAuth access tokens required (issuer ${authConfig.issuer}, resource ${authConfig.resource}${scopes}); each (iss, sub, client) is a caller of its own`,
      );
    } else
      log(
        authToken !== undefined
          ? `HTTP: bearer token required; ${oneCaller}`
          : isLoopback(flags.host)
            ? `HTTP: no authentication (loopback only); ${oneCaller}`
            : `warning: HTTP on ${flags.host} with no authentication (--allow-unauthenticated); ${oneCaller}`,
      );
    log(
      `health and metrics on ${http.url.replace(/\/mcp$/, '')}/healthz, /readyz, /metrics${flags.healthAuth ? ' (bearer token required)' : ''}`,
    );
    if (telemetry) log(describeTelemetry(telemetry));
    log(
      `listening on ${http.url} with ${describeBackend(backend, flags)}; tools: ${[...executor.tools.keys()].join(', ')}`,
    );
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => void stop(signal, () => http.close()));
  } else {
    const stdio = await serveStdio(executor, {
      maxMessageBytes: flags.maxMessageBytes,
      maxOutputBufferBytes: flags.maxOutputBufferBytes,
      version,
      wire,
      onStdinClose: flags.onStdinClose,
      drainTimeoutMs: flags.drainTimeoutMs,
      onInputEnd: (calls) =>
        log(
          `stdin closed: answering ${plural(calls, 'call')} in flight before exiting (--on-stdin-close finish; at most ${flags.drainTimeoutMs} ms)`,
        ),
      tasks,
      inputWaits,
      outputBudget,
    });
    if (flags.healthPort !== undefined) {
      const health = await serveHealth(ops.handler(), flags.healthHost, flags.healthPort);
      log(`health and metrics on ${health.url}/healthz, /readyz, /metrics`);
    }
    if (telemetry) log(describeTelemetry(telemetry));
    log(`serving on stdio with ${describeBackend(backend, flags)}; tools: ${[...executor.tools.keys()].join(', ')}`);
    // The MCP lifecycle: closing stdin is how a stdio client shuts the server down (a closed stdout ends it too).
    // Every way it ends goes through the connection's close, which says what it cancelled.
    let signalled: string | undefined;
    void stdio.closed.then((c) =>
      stop(signalled ?? c.reason, async () => undefined, { calls: c.cancelledCalls, tasks: c.cancelledTasks }),
    );
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        signalled ??= signal;
        void stdio.close();
      });
    }
  }
});

registerInitTools(program, version);
registerCheckTools(program);
(await import('./probe.js')).registerProbe(program);
(await import('./worker.js')).registerWorker(program);
listServeOptionsInHelp(program);
redisOptions(serve, {
  redis:
    'put each call on a BullMQ queue on this Redis for `mcp-cancel-pool worker` hosts instead of the local pool (see docs/many-hosts.md "Many hosts")',
  queue: 'with --redis: the queue name (the same on the worker hosts)',
});
program.hook('preAction', (_program, command) => refuseInapplicable(command));

// Start-up errors end in one line and exit 1: what went wrong and what to do, never a stack into our code.
const fail = (error: unknown) => {
  const line = startupErrorLine(error) ?? (error instanceof Error ? error.message.split('\n')[0] : String(error));
  log(
    error instanceof UsageError || error instanceof MissingPeerError || startupErrorLine(error) !== undefined
      ? line!
      : `cannot start: ${line}`,
  );
  process.exit(1);
};
try {
  checkSwitchesInEnv(program);
  await program.parseAsync(process.argv);
} catch (error) {
  fail(error);
}
