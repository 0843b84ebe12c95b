/**
 * Starting the servers under test as real child processes and connecting a
 * real SDK client to each: ours over stdio or Streamable HTTP, and the
 * baselines (stdio; (f) over HTTP too). A 2025 connection uses the SDK 1.32
 * client; a 2026 one (`era: '2026'`) the 2.x client pinned to 2026-07-28,
 * whose abort is a `notifications/cancelled` on stdio and a closed response
 * stream over HTTP. Every scenario gets its connections from here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { statCpuMs } from '#dist/src/probe/cpu.js';

/** dist-dev/ root (this file is dist-dev/bench/lib/servers.js), where the baselines are. */
const DEV = new URL('../../', import.meta.url);
const path = (rel: string) => fileURLToPath(new URL(rel, DEV));
/** Our server's CLI, from the package's own build. */
const CLI = fileURLToPath(import.meta.resolve('#dist/src/cli/main.js'));

export type ServerKind =
  | 'ours'
  | 'main-thread'
  | 'main-thread-yield'
  | 'piscina-abort'
  | 'piscina-coop'
  | 'workerpool'
  | 'bullmq'
  | 'sdk2-piscina'
  | 'sdk2-coop'
  | 'fastmcp';
export type TransportKind = 'stdio' | 'http';

export interface ServerSpec {
  readonly kind: ServerKind;
  readonly transport: TransportKind;
  readonly threads: number;
  /** Ours only: `--grace-ms`. */
  readonly graceMs?: number;
  /** Ours only: `--spare-threads` (the server's default, 1, when absent). */
  readonly spareThreads?: number;
  /** Told apart in labels, e.g. "1 thread". */
  readonly tag?: string;
  /** Ours: `serve --redis` (calls go to worker hosts); (d): the Redis its queue lives on. */
  readonly redis?: string;
  /** With `redis`: the queue name. */
  readonly queue?: string;
  /**
   * The protocol revision the client speaks: 2025-11-25 (SDK 1.32 client) or 2026-07-28 (SDK 2.x client, modern mode).
   * @default '2025'
   */
  readonly era?: '2025' | '2026';
  /** More command-line arguments, after the ones the spec implies (ours over HTTP: `--max-sessions`, …). */
  readonly args?: readonly string[];
}

/** Human names for the report. */
export const KIND_LABEL: Record<ServerKind, string> = {
  ours: 'ours',
  'main-thread': '(a) main thread',
  'main-thread-yield': "(a') main thread, yielding",
  'piscina-abort': '(b) Piscina + abort',
  'piscina-coop': '(e) Piscina + SAB flag',
  workerpool: '(c) workerpool cancel',
  bullmq: '(d) plain BullMQ + AbortSignal + pub/sub',
  'sdk2-piscina': '(f) SDK 2.x McpServer + Piscina + abort',
  'sdk2-coop': '(g) SDK 2.x Server + Piscina + SAB flag',
  fastmcp: '(h) fastmcp + Piscina + abort',
};

export function specLabel(spec: ServerSpec): string {
  const tag = spec.tag ? `, ${spec.tag}` : '';
  const era = spec.era === '2026' ? ', 2026' : '';
  if (spec.kind === 'ours') return `ours (${spec.transport}${era}${tag})`;
  return spec.kind === 'sdk2-piscina' || (spec.kind === 'sdk2-coop' && spec.transport === 'http')
    ? `${KIND_LABEL[spec.kind]} (${spec.transport}${era}${tag})`
    : `${KIND_LABEL[spec.kind]}${tag}`;
}

/** The command line that starts a server, for the report. */
export function serverCommand(spec: ServerSpec): string[] {
  return [...baseCommand(spec), ...(spec.args ?? [])];
}

function baseCommand(spec: ServerSpec): string[] {
  switch (spec.kind) {
    case 'ours':
      return [
        CLI,
        'serve',
        '--transport',
        spec.transport,
        // A front end on Redis has no pool (serve refuses pool flags there): the hosts take them.
        ...(spec.redis === undefined ? ['--threads', String(spec.threads)] : []),
        ...(spec.graceMs !== undefined && spec.redis === undefined ? ['--grace-ms', String(spec.graceMs)] : []),
        ...(spec.spareThreads !== undefined && spec.redis === undefined
          ? ['--spare-threads', String(spec.spareThreads)]
          : []),
        ...(spec.transport === 'http' ? ['--port', '0'] : []),
        ...(spec.redis !== undefined ? ['--redis', spec.redis, '--queue', spec.queue ?? 'mcp-cancel-pool'] : []),
      ];
    case 'main-thread':
      return [path('bench/baselines/main-thread.js')];
    case 'main-thread-yield':
      return [path('bench/baselines/main-thread.js'), '--yield'];
    case 'piscina-abort':
      return [path('bench/baselines/piscina-abort.js'), '--threads', String(spec.threads)];
    case 'piscina-coop':
      return [path('bench/baselines/piscina-coop.js'), '--threads', String(spec.threads)];
    case 'workerpool':
      return [path('bench/baselines/workerpool.js'), '--threads', String(spec.threads)];
    case 'bullmq':
      return [path('bench/baselines/bullmq-front.js'), '--redis', spec.redis ?? '', '--queue', spec.queue ?? 'bench-d'];
    case 'sdk2-piscina':
      return [
        path('bench/baselines/sdk2-piscina.js'),
        '--threads',
        String(spec.threads),
        ...(spec.transport === 'http' ? ['--http'] : []),
      ];
    case 'sdk2-coop':
      return [
        path('bench/baselines/sdk2-coop.js'),
        '--threads',
        String(spec.threads),
        ...(spec.transport === 'http' ? ['--http'] : []),
      ];
    case 'fastmcp':
      return [path('bench/baselines/fastmcp-http.js'), '--threads', String(spec.threads)];
  }
}

export interface SpinArgs {
  ms: number;
  stageMs?: number;
  cooperative?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (p: Progress) => void;
}

/** A connected client and the server process behind it. */
export class Connection {
  /** Responses the client got for requests it had already cancelled (the SDK reports them as errors). */
  lateResponses = 0;
  /** The last few KB the server wrote to stderr, to explain a server that went away. */
  stderrTail = '';
  private closing = false;
  private lost: Error | undefined;
  private constructor(
    readonly spec: ServerSpec,
    private readonly legacy: Client | undefined,
    private readonly modern: ModernClient | undefined,
    private readonly child: ChildProcess | undefined,
    private readonly transport: Transport | ModernStdioTransport | ModernHttpTransport,
  ) {}

  /** The SDK 1.32 client of a 2025 connection (scenarios that send 2025-only requests: tasks, ping). */
  get client(): Client {
    if (!this.legacy) throw new Error(`${this.label}: a 2026 connection has no 2025 client`);
    return this.legacy;
  }

  /** The server process's id. */
  get pid(): number | undefined {
    const t = this.transport;
    return (
      this.child?.pid ??
      (t instanceof StdioClientTransport || t instanceof ModernStdioTransport ? (t.pid ?? undefined) : undefined)
    );
  }

  /** CPU time the server has used so far (Linux /proc; undefined elsewhere): the whole process and its main thread alone. */
  cpuTimes(): { processMs: number; mainThreadMs: number } | undefined {
    const pid = this.pid;
    if (pid === undefined) return undefined;
    try {
      return { processMs: statCpuMs(`/proc/${pid}/stat`), mainThreadMs: statCpuMs(`/proc/${pid}/task/${pid}/stat`) };
    } catch {
      return undefined;
    }
  }

  get label(): string {
    return specLabel(this.spec);
  }

  static async open(spec: ServerSpec): Promise<Connection> {
    if (spec.transport === 'http' && spec.kind !== 'ours' && spec.kind !== 'sdk2-piscina')
      throw new Error('only ours and (f) serve HTTP');
    const [script, ...args] = serverCommand(spec);
    const modern = spec.era === '2026';
    const info = { name: 'mcp-cancel-pool-bench', version: '0.0.0' };
    const client = modern
      ? new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
      : new Client(info);
    let transport: Transport | ModernStdioTransport | ModernHttpTransport;
    let child: ChildProcess | undefined;
    if (spec.transport === 'stdio') {
      const params = { command: process.execPath, args: [script!, ...args], stderr: 'pipe' as const };
      transport = modern ? new ModernStdioTransport(params) : new StdioClientTransport(params);
    } else {
      child = spawn(process.execPath, [script!, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      const started = child;
      // A server that never says where it listens is stopped here: nothing else holds it, and it would outlive the bench.
      const url = new URL(
        await listeningUrl(started).catch((error: unknown) => {
          started.kill('SIGKILL');
          throw error;
        }),
      );
      transport = modern ? new ModernHttpTransport(url) : new StreamableHTTPClientTransport(url);
    }
    const conn = modern
      ? new Connection(spec, undefined, client as ModernClient, child, transport)
      : new Connection(spec, client as Client, undefined, child, transport);
    const stderr =
      transport instanceof StdioClientTransport || transport instanceof ModernStdioTransport
        ? transport.stderr
        : child?.stderr;
    stderr?.on('data', (chunk: Buffer) => (conn.stderrTail = (conn.stderrTail + chunk.toString('utf8')).slice(-4096)));
    client.onclose = () => {
      if (!conn.closing)
        conn.lost = new Error(`${conn.label}: the server went away; its stderr ended with:\n${conn.stderrTail}`);
    };
    client.onerror = (error) => {
      if (/unknown message ID/i.test(error.message)) conn.lateResponses++;
    };
    if (modern) await (client as ModernClient).connect(transport);
    else await (client as Client).connect(transport);
    return conn;
  }

  /** The server process went away without being closed (it crashed). */
  get isLost(): boolean {
    return this.lost !== undefined;
  }

  callSpin(args: SpinArgs, options: CallOptions = {}): Promise<CallToolResult> {
    if (this.lost) return Promise.reject(this.lost);
    if (this.modern) {
      // 2.x: one options argument; its abort sends notifications/cancelled (stdio) or closes the stream (HTTP).
      return this.modern.callTool(
        { name: 'spin', arguments: { ...args } },
        {
          timeout: 600_000,
          ...(options.signal && { signal: options.signal }),
          ...(options.onprogress && { onprogress: options.onprogress }),
        },
      ) as unknown as Promise<CallToolResult>;
    }
    return this.client.callTool({ name: 'spin', arguments: { ...args } }, undefined, {
      timeout: 600_000,
      ...(options.signal && { signal: options.signal }),
      ...(options.onprogress && { onprogress: options.onprogress }),
    }) as Promise<CallToolResult>;
  }

  /**
   * How many cancelled calls have stopped burning CPU so far: for ours,
   * executor://stats `cancelled` − `stopping` (`cancelled` counts a cancel
   * the moment it wins, `stopping` the stopped jobs whose worker has not
   * returned yet; the bench sets no deadlines, so every stop is a cancel);
   * the baselines count it when their loop left or their worker was
   * terminated (`stopped` in bench://stats).
   */
  async stoppedCount(): Promise<number> {
    const uri = this.spec.kind === 'ours' ? 'executor://stats' : 'bench://stats';
    const r = this.modern ? await this.modern.readResource({ uri }) : await this.client.readResource({ uri });
    const content = r.contents[0];
    const stats = JSON.parse(content && 'text' in content ? content.text : '{}') as Record<string, number>;
    return this.spec.kind === 'ours' ? (stats.cancelled ?? 0) - (stats.stopping ?? 0) : (stats.stopped ?? 0);
  }

  /** Waits until the server answers a zero-work call: its pool is up and a worker is free. */
  async warm(): Promise<void> {
    await this.callSpin({ ms: 0 });
  }

  async close(): Promise<void> {
    this.closing = true;
    await (this.modern ?? this.client).close().catch(() => undefined);
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child!.once('exit', resolve));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
  }
}

/** Reads the HTTP server's "listening on <url>" line from its stderr. */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    // Generous: servers start all at once (withConnections), on a machine that may be shared.
    const timer = setTimeout(() => reject(new Error(`server did not report its URL in 60 s:\n${text}`)), 60_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${text}`));
    });
  });
}

/**
 * Opens a connection per spec (each warmed up), runs `body`, then closes every
 * connection in the array, whatever happens; `body` may replace entries (a
 * restarted server) and the replacement is what gets closed.
 */
export async function withConnections<T>(
  specs: readonly ServerSpec[],
  body: (conns: Connection[]) => Promise<T>,
): Promise<T> {
  const conns: Connection[] = [];
  try {
    // All at once: start-up is mostly module loading, which the two cores then share instead of taking turns.
    const opened = await Promise.allSettled(
      specs.map(async (spec) => {
        const c = await Connection.open(spec);
        await c.warm().catch(async (error: unknown) => {
          await c.close();
          throw error;
        });
        return c;
      }),
    );
    for (const r of opened) if (r.status === 'fulfilled') conns.push(r.value);
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return await body(conns);
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
}
