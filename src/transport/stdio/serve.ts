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
import { LineTransport, type LineTransportOptions } from './line-transport.js';

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
}

/** A running stdio server. */
export interface StdioServer {
  /**
   * Settles, with the reason (e.g. "stdin closed", "stdout failed: EPIPE"), when the client closed
   * stdin or stdout, or {@link StdioServer.close} ran. In-flight calls were cancelled by then.
   */
  readonly closed: Promise<string>;
  /** Stops reading and cancels everything in flight. */
  close(): Promise<void>;
}

/** The backend session (and 2026 task owner) of the stdio connection. */
export const STDIO_SESSION = 'stdio';

/** Serves MCP on this process's stdin/stdout. */
export async function serveStdio(backend: CallBackend, options: StdioOptions): Promise<StdioServer> {
  const transport = new LineTransport(process.stdin, process.stdout, {
    ...(options.maxMessageBytes !== undefined && { maxMessageBytes: options.maxMessageBytes }),
    ...(options.maxOutputBufferBytes !== undefined && { maxOutputBufferBytes: options.maxOutputBufferBytes }),
  });
  const guard = new GuardedTransport(transport, STDIO_SESSION, backend, options.wire);
  const tasks = options.tasks ?? new TaskRunner(backend);
  const closed = new Promise<string>((resolve) => {
    // The connection is gone: so are its tasks (both eras: the connection is the caller), then the process may end.
    guard.onOwnerClosed = () => {
      void tasks.closeOwner(STDIO_SESSION);
      resolve(transport.closeReason ?? 'closed');
    };
  });
  const handle = sdkServeStdio(() => createMcpServer(backend, options.wire, options.version, () => ({ guard, wraps: false, caller: STDIO_SESSION }), tasks), {
    transport: guard as never,
    // Out-of-band reports (a refused opening was already answered on the wire); stderr stays as it was on 1.x.
    onerror: () => undefined,
  });
  return { closed, close: () => handle.close() };
}
