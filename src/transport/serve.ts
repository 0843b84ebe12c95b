/** Serving over stdio: one connection, one session, for the life of the process. */
import type { Executor } from '../executor.js';
import { createMcpServer } from '../server/server.js';
import { GuardedTransport, type WireStats } from './guard.js';
import { LineTransport } from './stdio.js';

/** Options for {@link serveStdio}. */
export interface StdioOptions {
  /** Longest accepted message line. Default 4 MiB. */
  readonly maxMessageBytes?: number;
  /** Reported in `initialize`. */
  readonly version: string;
  /** Wire counters to add to. */
  readonly wire: WireStats;
}

/** A running stdio server. */
export interface StdioServer {
  /** Settles when the client closed stdin or {@link StdioServer.close} ran. In-flight calls were cancelled by then. */
  readonly closed: Promise<void>;
  /** Stops reading and cancels everything in flight. */
  close(): Promise<void>;
}

/** Serves MCP on this process's stdin/stdout. */
export async function serveStdio(executor: Executor, options: StdioOptions): Promise<StdioServer> {
  const transport = new LineTransport(process.stdin, process.stdout, options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  const guard = new GuardedTransport(transport, 'stdio', executor, options.wire);
  const server = createMcpServer(executor, guard, options.wire, options.version);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(guard);
  return { closed, close: () => server.close() };
}
