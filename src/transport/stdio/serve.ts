/** Serving over stdio: one connection, one session, for the life of the process. */
import type { CallBackend } from '../../backend/backend.js';
import { createMcpServer } from '../../server/server.js';
import { GuardedTransport, type WireStats } from '../../server/guard.js';
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
  /** Reported in `initialize`. */
  readonly version: string;
  /** Wire counters to add to. */
  readonly wire: WireStats;
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

/** Serves MCP on this process's stdin/stdout. */
export async function serveStdio(backend: CallBackend, options: StdioOptions): Promise<StdioServer> {
  const transport = new LineTransport(process.stdin, process.stdout, {
    ...(options.maxMessageBytes !== undefined && { maxMessageBytes: options.maxMessageBytes }),
    ...(options.maxOutputBufferBytes !== undefined && { maxOutputBufferBytes: options.maxOutputBufferBytes }),
  });
  const guard = new GuardedTransport(transport, 'stdio', backend, options.wire);
  const server = createMcpServer(backend, guard, options.wire, options.version);
  const closed = new Promise<string>((resolve) => (server.onclose = () => resolve(transport.closeReason ?? 'closed')));
  await server.connect(guard);
  return { closed, close: () => server.close() };
}
