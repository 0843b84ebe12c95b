/**
 * For the client tests: a tap at the bottom of the client's stack that
 * records the wire and can hold messages "in the network", and the server
 * as a real stdio subprocess, as a real Streamable HTTP subprocess on
 * 127.0.0.1, or in memory (Executor + GuardedTransport + createMcpServer over
 * InMemoryTransport.createLinkedPair()).
 */
import {
  InMemoryTransport,
  StreamableHTTPClientTransport,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Server } from '@modelcontextprotocol/server';
import { Executor } from '../dist/src/index.js';
import { createMcpServer, GuardedTransport, newWireStats, type WireStats } from '../dist/src/entries/server.js';
import { CLI, CLIENT_TOOLS, startHttpServer } from './helpers.js';

export type Kind = 'memory' | 'stdio' | 'http';
/** The kinds every client test runs on; the requests-from-tools tests add 'http'. */
export const KINDS: Kind[] = ['memory', 'stdio'];

/** A JSON-RPC message with every field optional, for filtering. */
export type Msg = {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** Sits between the client (or its guard) and the real transport. */
export class Tap implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** Everything the client side put on the wire, in order. */
  readonly sent: Msg[] = [];
  /** Everything that arrived from the server, in order (held messages included). */
  readonly received: Msg[] = [];
  /** Messages held back by {@link Tap.hold}. */
  readonly held: JSONRPCMessage[] = [];
  /** Called for every message the client sends, before it leaves. */
  onSend?: (message: Msg) => void;
  private holding: ((m: Msg) => boolean) | undefined;

  constructor(readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** Passed through: a 2.x client cancels a 2026 HTTP request by closing its stream only where the transport says it has one. */
  get hasPerRequestStream(): boolean | undefined {
    return (this.inner as { hasPerRequestStream?: boolean }).hasPerRequestStream;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      this.received.push(message);
      if (this.holding?.(message)) this.held.push(message);
      else this.onmessage?.(message, extra);
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push(message);
    this.onSend?.(message);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Keeps matching incoming messages in the network until {@link Tap.release}. */
  hold(match: (m: Msg) => boolean): void {
    this.holding = match;
  }

  /** Delivers what was held, in order, and stops holding. */
  release(): void {
    this.holding = undefined;
    for (const m of this.held.splice(0)) this.onmessage?.(m);
  }

  /** Sends a message as the client, underneath anything stacked on this tap (e.g. a client that answers when it should not). */
  sendRaw(message: Msg): Promise<void> {
    this.sent.push(message);
    return this.inner.send(message as JSONRPCMessage);
  }

  /** Delivers a message to the client as if the server had sent it. */
  deliver(message: Msg): void {
    this.received.push(message);
    this.onmessage?.(message as JSONRPCMessage);
  }

  /** Client → server cancellations. */
  cancelsSent(): Msg[] {
    return this.sent.filter((m) => m.method === 'notifications/cancelled');
  }

  /** Server → client cancellations. */
  cancelsReceived(): Msg[] {
    return this.received.filter((m) => m.method === 'notifications/cancelled');
  }

  /** Responses (no method) with this id that arrived from the server. */
  responsesFor(id: unknown): Msg[] {
    return this.received.filter((m) => m.method === undefined && m.id === id);
  }

  /** The id of the first `tools/call` the client sent whose arguments match. */
  toolCallId(pick: (args: Record<string, unknown>) => boolean): unknown {
    return this.sent.find(
      (m) => m.method === 'tools/call' && pick((m.params?.arguments ?? {}) as Record<string, unknown>),
    )?.id;
  }
}

/** The in-process server of the memory variant. */
export interface MemoryServer {
  readonly executor: Executor;
  readonly guard: GuardedTransport;
  readonly server: Server;
  readonly wire: WireStats;
  /** What the SDK server reported through onerror (e.g. "unknown message ID"). */
  readonly errors: Error[];
}

/** A transport to a fresh server of the given kind, tapped. */
export interface Connection {
  readonly kind: Kind;
  readonly tap: Tap;
  /** Only for the memory variant. */
  readonly memory?: MemoryServer;
  /** Closes the server side's resources (the client closes the transport itself). */
  dispose(): Promise<void>;
}

export interface ServerSetup {
  /** Server-side TTL for cancelled requests to the client (memory only; stdio uses the default). */
  readonly cancelledTtlMs?: number;
  readonly threads?: number;
}

export async function openConnection(kind: Kind, setup: ServerSetup = {}): Promise<Connection> {
  const threads = setup.threads ?? 2;
  if (kind === 'stdio') {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--threads', String(threads), '--tools', CLIENT_TOOLS],
      stderr: 'pipe',
    });
    return { kind, tap: new Tap(transport), dispose: async () => transport.close() };
  }
  if (kind === 'http') {
    const server = await startHttpServer(['--threads', String(threads), '--tools', CLIENT_TOOLS]);
    const transport = new StreamableHTTPClientTransport(server.url);
    return {
      kind,
      tap: new Tap(transport),
      dispose: async () => {
        await transport.close();
        await server.stop();
      },
    };
  }
  const executor = await Executor.create({ threads, toolModules: [CLIENT_TOOLS] });
  const wire: WireStats = newWireStats();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const guard = new GuardedTransport(
    serverSide,
    'memory',
    executor,
    wire,
    setup.cancelledTtlMs === undefined ? {} : { cancelledTtlMs: setup.cancelledTtlMs },
  );
  const server = createMcpServer(executor, wire, 'test', () => ({ guard, wraps: false, caller: 'memory' }));
  const errors: Error[] = [];
  server.onerror = (e) => errors.push(e);
  await server.connect(guard);
  return {
    kind,
    tap: new Tap(clientSide),
    memory: { executor, guard, server, wire, errors },
    dispose: async () => {
      await server.close();
      await executor.close();
    },
  };
}

/** Reads `executor://stats` through any SDK client (the shared helper). */
export { stats as serverStats } from './helpers.js';
