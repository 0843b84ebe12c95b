/**
 * examples/embed/server.mjs as a real subprocess, spoken to by real SDK
 * clients of both lines (1.x `@modelcontextprotocol/sdk`, 2.x
 * `@modelcontextprotocol/client`), in both eras, over stdio and Streamable
 * HTTP, every message recorded. One shape for all of them, so each test runs
 * unchanged on every combination.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as Http1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerStats } from '../dist/src/entries/server.js';
import { recordWire } from './wire-recorder.js';
import type { Msg } from './wire-clients.js';
import { MODERN } from './modern-helpers.js';

export const EXAMPLE = fileURLToPath(new URL('../examples/embed/server.mjs', import.meta.url));
export const PLAIN_EXAMPLE = fileURLToPath(new URL('../examples/embed/plain-server.mjs', import.meta.url));

/** How a client reaches the example: transport, era, SDK line. */
export interface Combo {
  readonly transport: 'stdio' | 'http';
  readonly era: '2025' | '2026';
  readonly line: '1.x' | '2.x';
}

export const COMBOS: readonly Combo[] = [
  { transport: 'stdio', era: '2025', line: '1.x' },
  { transport: 'stdio', era: '2025', line: '2.x' },
  { transport: 'stdio', era: '2026', line: '2.x' },
  { transport: 'http', era: '2025', line: '1.x' },
  { transport: 'http', era: '2025', line: '2.x' },
  { transport: 'http', era: '2026', line: '2.x' },
];

export const label = (c: Combo) => `${c.transport}, ${c.era}, SDK ${c.line}`;

export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
}

/** A connected client, whatever its line and transport. */
export interface Conn {
  call(
    name: string,
    args: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<{ isError?: boolean; content: unknown[]; structuredContent?: unknown }>;
  stats(): Promise<ServerStats>;
  /** Everything the server sent, in arrival order. */
  readonly received: Msg[];
  /** Everything the client sent, in order. */
  readonly sent: Msg[];
  /** Stdio only: the child's stdin, to put a call and its cancel in one write. */
  readonly stdin?: NodeJS.WritableStream & { cork(): void; uncork(): void };
  close(): Promise<void>;
}

/** The example over HTTP, as a subprocess; `url` once it listens. */
export interface HttpExample {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `script` with `--http 0` and `args`, and waits for its "listening on URL" line. */
export async function startHttpExample(args: readonly string[], script = EXAMPLE): Promise<HttpExample> {
  const child = spawn(process.execPath, [script, '--http', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`example exited ${code}: ${text}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface AnyClient {
  connect(t: never): Promise<void>;
  readResource(p: { uri: string }): Promise<{ contents: unknown[] }>;
  close(): Promise<void>;
}

/** Connects a client of `combo`'s line and era: over stdio it starts the example with `args`; over HTTP it uses `http`. */
export async function connect(combo: Combo, args: readonly string[], http?: HttpExample): Promise<Conn> {
  let transport: Transport;
  let client: AnyClient;
  if (combo.line === '1.x') {
    transport =
      combo.transport === 'stdio'
        ? new Stdio1({ command: process.execPath, args: [EXAMPLE, ...args], stderr: 'pipe' })
        : new Http1(new URL(http!.url));
    client = new Client1({ name: 'embed-test-1x', version: '1.0.0' });
  } else {
    transport =
      combo.transport === 'stdio'
        ? new Stdio2({ command: process.execPath, args: [EXAMPLE, ...args], stderr: 'pipe' })
        : new Http2(new URL(http!.url));
    // 2.x: pinned to 2026, or its default 2025 opening with `initialize`.
    const negotiation = combo.era === '2026' ? { mode: { pin: MODERN } } : { mode: 'legacy' };
    client = new Client2({ name: 'embed-test-2x', version: '1.0.0' }, {
      versionNegotiation: negotiation,
    } as never);
  }
  await client.connect(transport as never);
  const { received, sent } = recordWire(transport);
  const c = client as unknown as {
    callTool(...a: unknown[]): Promise<{ isError?: boolean; content: unknown[]; structuredContent?: unknown }>;
  };
  const stdin =
    combo.transport === 'stdio'
      ? ((transport as unknown as { _process: ChildProcess })._process.stdin as Conn['stdin'])
      : undefined;
  return {
    call: (name, args2, options = {}) =>
      combo.line === '1.x'
        ? c.callTool({ name, arguments: args2 }, undefined, { ...options, timeout: 120_000 })
        : c.callTool({ name, arguments: args2 }, { ...options, timeout: 120_000 }),
    stats: async () => {
      const r = await client.readResource({ uri: 'executor://stats' });
      return JSON.parse((r.contents[0] as { text: string }).text) as ServerStats;
    },
    received: received,
    sent: sent,
    ...(stdin && { stdin }),
    close: () => client.close().catch(() => undefined),
  };
}

/** The id and progress token of the `tools/call` the client sent with these arguments. */
export function sentCall(
  conn: Conn,
  matches: (args: Record<string, unknown>) => boolean,
): { id: unknown; token: unknown } {
  const m = conn.sent.find(
    (s) => s.method === 'tools/call' && matches((s.params?.arguments ?? {}) as Record<string, unknown>),
  );
  if (!m) throw new Error('no such call on the wire');
  return { id: m.id, token: (m.params?._meta as { progressToken?: unknown } | undefined)?.progressToken };
}

/** Indexes in `received` of everything about request `id`: its response, and progress on `token`. */
export function messagesFor(conn: Conn, id: unknown, token: unknown): { responses: number[]; progress: number[] } {
  const responses: number[] = [];
  const progress: number[] = [];
  conn.received.forEach((m, i) => {
    if (m.method === undefined && m.id === id) responses.push(i);
    if (m.method === 'notifications/progress' && token !== undefined && m.params?.progressToken === token)
      progress.push(i);
  });
  return { responses, progress };
}
