/**
 * Connecting to the server under test in one era, over stdio (a command the
 * probe starts) or Streamable HTTP. 2025-11-25: a real SDK client does the
 * `initialize` handshake. 2026-07-28: no handshake; the raw transport is
 * started, and `server/discover` must name the revision.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import stringArgv from 'string-argv';
import { ERAS, META } from './era.js';
import { Http2026Transport } from './http-2026.js';
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

function openTransport(spec: TargetSpec, era: Era): { transport: Transport; tail: () => string } {
  if (spec.kind === 'http') return { transport: era === '2026' ? new Http2026Transport(new URL(spec.url)) : new StreamableHTTPClientTransport(new URL(spec.url)), tail: () => '' };
  let tail = '';
  const [command, ...args] = parseCommand(spec.command);
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const stdio = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  stdio.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString('utf8')).slice(-4096)));
  return { transport: stdio, tail: () => tail };
}

/** Connects in `era`; `timeoutMs` bounds the opening (process start included), later requests get `requestTimeoutMs`. */
export async function connect(spec: TargetSpec, era: Era, timeoutMs: number, requestTimeoutMs = timeoutMs): Promise<Connected> {
  const { transport, tail } = openTransport(spec, era);
  const wire = new Wire(transport, era);
  if (transport instanceof StdioClientTransport) {
    // The SDK transport writes one message per write; the same-write races need two in one (the child's stdin, which the SDK keeps private).
    const internals = transport as unknown as { _process?: { stdin?: { write(s: string): boolean } | null } };
    wire.writeTogether = (lines) => {
      const stdin = internals._process?.stdin;
      if (!stdin) return false;
      stdin.write(lines);
      return true;
    };
  }
  let closing = false;
  let lost = false;
  const pidOf = () => (spec.kind === 'stdio' ? ((transport as StdioClientTransport).pid ?? undefined) : spec.pid);
  if (era === '2025') {
    const client = new Client({ name: 'mcp-cancel-pool-probe', version: '1.0.0' });
    client.onclose = () => {
      if (!closing) lost = true;
    };
    client.onerror = () => undefined; // recorded on the wire
    await client.connect(transport, { timeout: timeoutMs });
    const version = client.getServerVersion();
    const init = wire.log.find((e) => e.dir === 'in' && (e.msg.result as { protocolVersion?: string } | undefined)?.protocolVersion)?.msg.result as { protocolVersion: string } | undefined;
    return {
      spec,
      wire,
      transport,
      pid: pidOf(),
      ...(version && { serverInfo: { name: version.name, version: version.version } }),
      ...(init && { protocolVersion: init.protocolVersion }),
      listTools: async () => (await client.listTools(undefined, { timeout: requestTimeoutMs })).tools.map((t) => t.name),
      stderrTail: tail,
      lost: () => lost,
      close: async () => {
        closing = true;
        if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
        await client.close().catch(() => undefined);
      },
    };
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
    await transport.start();
    const discover = await ask(wire, 'server/discover', {}, timeoutMs);
    const supported = (discover.supportedVersions as unknown[] | undefined) ?? [];
    if (!supported.includes(ERAS['2026'].version)) throw new Error(`server/discover does not offer ${ERAS['2026'].version} (it offers: ${supported.join(', ') || 'nothing'})`);
    const info = (discover._meta as Record<string, unknown> | undefined)?.[META.serverInfo] as { name?: string; version?: string } | undefined;
    return {
      spec,
      wire,
      transport,
      pid: pidOf(),
      ...(info?.name !== undefined && { serverInfo: { name: info.name, version: info.version ?? '?' } }),
      protocolVersion: ERAS['2026'].version,
      listTools: async () => ((await ask(wire, 'tools/list', {}, requestTimeoutMs)).tools as { name: string }[]).map((t) => t.name),
      stderrTail: tail,
      lost: () => lost,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A request of the probe's own whose result it needs: an error answer or silence throws. */
export async function ask(wire: Wire, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
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
export async function erasOffered(spec: TargetSpec, connectTimeoutMs: number): Promise<{ eras: Era[]; notes: string[] }> {
  const eras: Era[] = [];
  const notes: string[] = [];
  let handshakeMs: number | undefined;
  for (const era of ['2025', '2026'] as const) {
    const wait = era === '2026' && handshakeMs !== undefined ? Math.min(connectTimeoutMs, Math.max(MIN_DISCOVER_MS, DISCOVER_PER_HANDSHAKE * handshakeMs)) : connectTimeoutMs;
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
