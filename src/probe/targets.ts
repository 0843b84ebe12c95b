/**
 * Connecting to the server under test in one era, over stdio (a command the
 * probe starts) or Streamable HTTP. 2025-11-25: the `initialize` handshake,
 * as an SDK client does it (the revisions it accepts, `notifications/initialized`,
 * then the negotiated version on every HTTP request), on the probe's own
 * transports: the default install has no MCP client package. 2026-07-28: no
 * handshake; the raw transport is started, and `server/discover` must name
 * the revision.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import stringArgv from 'string-argv';
import { ERAS, META } from './era.js';
import { Http2025Transport } from './http-2025.js';
import { Http2026Transport } from './http-2026.js';
import { ProbeStdioTransport } from './stdio.js';
import type { Era, TargetSpec } from './types.js';
import { Wire, wireStamp } from './wire.js';

/** A connected server. */
export interface Connected {
  readonly spec: TargetSpec;
  readonly wire: Wire;
  readonly transport: Transport;
  /** The process whose CPU the probe can read (the stdio child, or the `--pid` of an HTTP server). */
  readonly pid: number | undefined;
  readonly serverInfo?: { name: string; version: string };
  readonly protocolVersion?: string;
  /** The names of the server's tools. */
  listTools(): Promise<string[]>;
  /** The last few KB of the server's stderr (stdio only), to explain a server that went away. */
  stderrTail(): string;
  /** Whether the connection closed without the probe closing it. */
  readonly lost: () => boolean;
  close(): Promise<void>;
}

/** A short name for tables: the command or the URL. */
export function targetLabel(spec: TargetSpec): string {
  return spec.kind === 'stdio' ? spec.command : spec.url;
}

/** Splits a `--stdio` command line into the program and its arguments (shell-style quoting, no shell). */
export function parseCommand(line: string): [string, ...string[]] {
  const argv = stringArgv(line);
  if (argv.length === 0) throw new Error('empty --stdio command');
  return argv as [string, ...string[]];
}

/** The 2025-era revisions a server may answer `initialize` with (those the SDK 1.x client accepts). */
const ACCEPTED_2025 = [ERAS['2025'].version, '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

function openTransport(spec: TargetSpec, era: Era): { transport: Transport; tail: () => string } {
  if (spec.kind === 'http')
    return {
      transport: era === '2026' ? new Http2026Transport(new URL(spec.url)) : new Http2025Transport(new URL(spec.url)),
      tail: () => '',
    };
  const [command, ...args] = parseCommand(spec.command);
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  return { transport: new ProbeStdioTransport(command, args, env), tail: () => '' };
}

/** What a client answers the server's own requests with: `ping` gets `{}`, anything else "method not found" (the probe offers no capability). */
function answerServer(transport: Transport, message: JSONRPCMessage): void {
  const m = message as { id?: unknown; method?: unknown };
  if (typeof m.method !== 'string' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return;
  const reply =
    m.method === 'ping'
      ? { jsonrpc: '2.0', id: m.id, result: {} }
      : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
  void transport.send(reply as JSONRPCMessage).catch(() => undefined);
}

/** What a server says of itself when it opens (2025 `initialize`, 2026 `server/discover`). */
type ServerInfo = { name?: string; version?: string };

/** Connects in `era`; `timeoutMs` bounds the opening (process start included), later requests get `requestTimeoutMs`. */
export async function connect(
  spec: TargetSpec,
  era: Era,
  timeoutMs: number,
  requestTimeoutMs = timeoutMs,
): Promise<Connected> {
  const { transport } = openTransport(spec, era);
  const wire = new Wire(transport, era);
  let tail = '';
  if (transport instanceof ProbeStdioTransport) {
    // The same-write races need a call and its cancel in one write of the child's stdin.
    wire.writeTogether = (lines) => transport.writeTogether(lines);
  }
  let closing = false;
  let lost = false;
  const pidOf = () =>
    transport instanceof ProbeStdioTransport ? transport.pid : spec.kind === 'http' ? spec.pid : undefined;
  const stderrTail = () => tail;
  /** The connection, once the server answered its era's opening. */
  const connected = (info: ServerInfo | undefined, protocolVersion: string, close: () => Promise<void>): Connected => ({
    spec,
    wire,
    transport,
    pid: pidOf(),
    ...(info?.name !== undefined && { serverInfo: { name: info.name, version: info.version ?? '?' } }),
    protocolVersion,
    listTools: async () =>
      ((await ask(wire, 'tools/list', {}, requestTimeoutMs)).tools as { name: string }[]).map((t) => t.name),
    stderrTail,
    lost: () => lost,
    close,
  });
  if (era === '2025') {
    transport.onmessage = (message: JSONRPCMessage) => answerServer(transport, message);
    transport.onerror = () => undefined; // recorded on the wire
    transport.onclose = () => {
      if (!closing) lost = true;
    };
    const close = async () => {
      closing = true;
      if (transport instanceof Http2025Transport) await transport.terminateSession().catch(() => undefined);
      await transport.close().catch(() => undefined);
    };
    try {
      const started = performance.now();
      await withTimeout(transport.start(), timeoutMs, 'starting the server');
      if (transport instanceof ProbeStdioTransport)
        transport.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString('utf8')).slice(-4096)));
      const init = await ask(
        wire,
        'initialize',
        {
          protocolVersion: ERAS['2025'].version,
          capabilities: {},
          clientInfo: { name: 'mcp-cancel-pool-probe', version: '1.0.0' },
        },
        Math.max(1, timeoutMs - (performance.now() - started)),
      );
      const version = init.protocolVersion as string | undefined;
      if (version === undefined || !ACCEPTED_2025.includes(version))
        throw new Error(`Server's protocol version is not supported: ${String(version)}`);
      if (transport instanceof Http2025Transport) transport.setProtocolVersion(version);
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return connected(init.serverInfo as ServerInfo | undefined, version, close);
    } catch (error) {
      await close();
      throw error;
    }
  }
  // 2026-07-28: nobody but the Wire listens; over HTTP a cancel is the closed stream.
  if (transport instanceof Http2026Transport) {
    const http = transport;
    wire.canceller = (id) => {
      const at = wireStamp();
      http.abort(id);
      return { at, delivered: Promise.resolve() };
    };
  }
  transport.onmessage = () => undefined;
  transport.onerror = () => undefined;
  transport.onclose = () => {
    if (!closing) lost = true;
  };
  const close = async () => {
    closing = true;
    await transport.close().catch(() => undefined);
  };
  try {
    await withTimeout(transport.start(), timeoutMs, 'starting the server');
    if (transport instanceof ProbeStdioTransport)
      transport.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString('utf8')).slice(-4096)));
    const discover = await ask(wire, 'server/discover', {}, timeoutMs);
    const supported = (discover.supportedVersions as unknown[] | undefined) ?? [];
    if (!supported.includes(ERAS['2026'].version))
      throw new Error(
        `server/discover does not offer ${ERAS['2026'].version} (it offers: ${supported.join(', ') || 'nothing'})`,
      );
    return connected(
      (discover._meta as Record<string, unknown> | undefined)?.[META.serverInfo] as ServerInfo | undefined,
      ERAS['2026'].version,
      close,
    );
  } catch (error) {
    await close();
    throw error;
  }
}

/** `promise`, or an error naming `what` after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer in ${Math.round(ms)} ms`)), ms);
    });
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A request of the probe's own whose result it needs: an error answer or silence throws. */
export async function ask(
  wire: Wire,
  method: string,
  params: Record<string, unknown>,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const { id } = wire.request(method, params);
  const a = await wire.answer(id, timeoutMs);
  if (!a) throw new Error(`${method}: no answer in ${Math.round(timeoutMs)} ms`);
  if ('error' in a.msg) throw new Error(`${method}: ${JSON.stringify(a.msg.error).slice(0, 200)}`);
  return a.msg.result as Record<string, unknown>;
}

/** A 2026 discovery after a successful 2025 handshake waits this many times as long as the handshake took (at least {@link MIN_DISCOVER_MS}). */
const DISCOVER_PER_HANDSHAKE = 3;
const MIN_DISCOVER_MS = 5000;

/**
 * Which eras the server offers: 2025-11-25 when `initialize` succeeds,
 * 2026-07-28 when `server/discover` names it. Many 2025 servers never answer
 * a request before `initialize`, so the discovery cannot wait the whole
 * connect timeout each time: after a handshake it waits a few times what the
 * handshake took (the same process start, the same load), else the full
 * `connectTimeoutMs`.
 */
export async function erasOffered(
  spec: TargetSpec,
  connectTimeoutMs: number,
): Promise<{ eras: Era[]; notes: string[] }> {
  const eras: Era[] = [];
  const notes: string[] = [];
  let handshakeMs: number | undefined;
  for (const era of ['2025', '2026'] as const) {
    const wait =
      era === '2026' && handshakeMs !== undefined
        ? Math.min(connectTimeoutMs, Math.max(MIN_DISCOVER_MS, DISCOVER_PER_HANDSHAKE * handshakeMs))
        : connectTimeoutMs;
    const started = performance.now();
    try {
      const conn = await connect(spec, era, wait);
      if (era === '2025') handshakeMs = performance.now() - started;
      await conn.close();
      eras.push(era);
    } catch (error) {
      notes.push(`${ERAS[era].version}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }
  return { eras, notes };
}
