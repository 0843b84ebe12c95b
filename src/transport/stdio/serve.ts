/**
 * Serving over stdio: one connection, one session, for the life of the
 * process, in either era. The SDK's `serveStdio` decides the era from the
 * opening message (`initialize`: 2025; a request with the per-request
 * envelope: 2026) and pins one server instance to the connection; its wire
 * is our guard over our own {@link LineTransport}, so every message in and
 * out passes the guard whatever the era.
 */
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import type { CallBackend } from '../../backend/backend.js';
import { createMcpServer } from '../../server/server.js';
import { GuardedTransport, type WireStats } from '../../server/guard.js';
import { TaskRunner } from '../../tasks/runner.js';
import { InputWaits } from '../../asks/input-waits.js';
import { LineTransport } from './line-transport.js';
import type { OutputBudget } from '../output-budget.js';
import { DEFAULTS } from '../../defaults.js';

/** Options for {@link serveStdio}. */
export interface StdioOptions {
  /** Longest accepted message line. Default 4 MiB. */
  readonly maxMessageBytes?: number;
  /**
   * Unread output above which stdin is not read until the client catches up (see {@link LineTransportOptions.maxOutputBufferBytes}).
   * @default 1 MiB
   */
  readonly maxOutputBufferBytes?: number;
  /** Reported in `initialize` and in every 2026 result's `_meta`. */
  readonly version: string;
  /** Wire counters to add to. */
  readonly wire: WireStats;
  /**
   * The backend's tasks (the runner its other servers share, if any).
   * @default a runner of its own, with the defaults
   */
  readonly tasks?: TaskRunner;
  /**
   * The backend's parked 2026 calls (tools that asked the client), shared with its other servers, if any.
   * @default a registry of its own, with the defaults (closed with the server)
   */
  readonly inputWaits?: InputWaits;
  /**
   * What the end of stdin does: `cancel` cancels every call in flight and
   * closes (the MCP lifecycle: the client is gone); `finish` keeps the
   * connection open for output until every request already read has been
   * answered, at most {@link StdioOptions.drainTimeoutMs}, then closes as
   * `cancel` does (for scripts that pipe requests in and close stdin).
   * Working tasks nobody waits on are cancelled either way.
   * @default 'cancel'
   */
  readonly onStdinClose?: 'cancel' | 'finish';
  /**
   * With `onStdinClose: 'finish'`: how long the calls in flight may take to
   * be answered; what is left then is cancelled.
   * @default 25_000
   */
  readonly drainTimeoutMs?: number;
  /** With `onStdinClose: 'finish'`: told when stdin ends, with the tool calls then in flight. */
  readonly onInputEnd?: (callsInFlight: number) => void;
  /**
   * Bounds the output held for a client that does not read it (../output-budget.ts): past it the connection is
   * closed, which cancels its calls, as a closed stdout would. Without it only stdin is paused at the bound.
   */
  readonly outputBudget?: OutputBudget;
}

/** How a stdio connection ended. */
export interface StdioClosed {
  /** e.g. "stdin closed", "stdout failed: EPIPE", "closed" (by {@link StdioServer.close}). */
  readonly reason: string;
  /** Plain tool calls the close cancelled: never answered. */
  readonly cancelledCalls: number;
  /** Working tasks the close cancelled. */
  readonly cancelledTasks: number;
}

/** A running stdio server. */
export interface StdioServer {
  /**
   * Settles when the client closed stdin or stdout, or {@link StdioServer.close}
   * ran, once what was in flight was cancelled, with what that cancelled.
   */
  readonly closed: Promise<StdioClosed>;
  /** Stops reading and cancels everything in flight. */
  close(): Promise<void>;
}

/** The backend session (and 2026 task owner) of the stdio connection. */
export const STDIO_SESSION = 'stdio';

/** Serves MCP on this process's stdin/stdout. */
export async function serveStdio(backend: CallBackend, options: StdioOptions): Promise<StdioServer> {
  const finish = options.onStdinClose === 'finish';
  const transport = new LineTransport(process.stdin, process.stdout, {
    ...(options.maxMessageBytes !== undefined && { maxMessageBytes: options.maxMessageBytes }),
    ...(options.maxOutputBufferBytes !== undefined && { maxOutputBufferBytes: options.maxOutputBufferBytes }),
    atInputEnd: finish ? 'keep-writing' : 'close',
  });
  const inputWaits = options.inputWaits ?? new InputWaits(backend);
  const budget = options.outputBudget;
  const unwatch = budget?.watch({
    unread: () => transport.unreadOutput,
    close: (why) => void transport.close(`output not read: ${why}`),
    wakes: true,
  });
  if (budget) transport.onOutputHeld = () => budget.wake();
  // abortMeansCancel: over stdio the SDK's request signal never aborts for a reason the guard has not already acted on.
  const tasks = options.tasks ?? new TaskRunner(backend);
  // tasks: the SDK's stdio entry makes its server on the first message, after the guard admitted it.
  const guard = new GuardedTransport(transport, STDIO_SESSION, backend, options.wire, {
    inputWaits,
    tasks,
    abortMeansCancel: false,
  });
  const closed = new Promise<StdioClosed>((resolve) => {
    // The connection is gone: so are its tasks (both eras: the connection is the caller), then the process may end.
    guard.onOwnerClosed = () => {
      unwatch?.();
      const reason = transport.closeReason ?? 'closed';
      const cancelledCalls = guard.unansweredAtClose;
      void tasks
        .closeOwner(STDIO_SESSION)
        .then((cancelledTasks) => resolve({ reason, cancelledCalls, cancelledTasks }));
    };
  });
  if (finish) {
    transport.oninputend = () => {
      options.onInputEnd?.(guard.calls.callsInFlight());
      // Every request already read gets its answer (a tasks/result waits for its task), within the bound; then the close cancels the rest.
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>(
        (resolve) => (timer = setTimeout(resolve, options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs)),
      );
      void Promise.race([guard.calls.whenIdle(), timedOut]).then(() => {
        clearTimeout(timer);
        return transport.close('stdin closed');
      });
    };
  }
  const handle = sdkServeStdio(
    () =>
      createMcpServer(
        backend,
        options.wire,
        options.version,
        () => ({ guard, wraps: false, caller: STDIO_SESSION }),
        tasks,
      ),
    {
      transport: guard,
      // Out-of-band reports (a refused opening was already answered on the wire); stderr stays as it was on 1.x.
      onerror: () => undefined,
    },
  );
  return {
    closed,
    close: async () => {
      await handle.close();
      if (!options.inputWaits) inputWaits.close();
    },
  };
}
