/**
 * The HTTP scenarios' load: each server a real child process (pinned with
 * `taskset` when given cores), driven by a raw keep-alive HTTP client
 * (node:http `Agent`) instead of an SDK client, which would spend more CPU
 * per call than some of the servers measured. Each server's process is read
 * from /proc: CPU time (the process, its main thread), resident memory and
 * its peak. Request ids are unique across the run; a call counts only when
 * its response is a result (bench/lib/http-wire.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request, type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { statCpuMs } from '#dist/src/probe/cpu.js';
import {
  initializeRequest,
  LEGACY_VERSION,
  legacyRequest,
  modernRequest,
  readOutcome,
  type Outcome,
  type WireRequest,
} from './http-wire.js';
import { listeningUrl, serverCommand, specLabel, type ServerSpec } from './servers.js';
import { us } from '#dist/src/probe/stats.js';

/** An HTTP answer, read to its end. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** performance.now() when the last byte arrived. */
  readonly endedAt: number;
}

let sequence = 0;
/** A request id no other request of this run has. */
export function uniqueId(): string {
  return `b${(sequence++).toString(36)}`;
}

/** A 2025-11-25 session: its id and the revision it agreed on. */
export interface LegacySession {
  readonly id: string;
  readonly version: string;
}

/** One server process over HTTP, and the keep-alive client that drives it. */
export class HttpServer {
  stderrTail = '';
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  private exited: Error | undefined;

  private constructor(
    readonly spec: ServerSpec,
    readonly url: URL,
    private readonly child: ChildProcess,
  ) {
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4096)),
    );
    child.once(
      'exit',
      (code) =>
        (this.exited = new Error(
          `${this.label}: the server exited (${code}); its stderr ended with:\n${this.stderrTail}`,
        )),
    );
  }

  /** Starts the server (under `taskset -c cpus` when given) and waits for its "listening on" line. */
  static async start(spec: ServerSpec, cpus?: string): Promise<HttpServer> {
    if (spec.transport !== 'http') throw new Error(`${specLabel(spec)}: not an HTTP server spec`);
    const command = [process.execPath, ...serverCommand(spec)];
    const [file, ...args] = cpus === undefined ? command : ['taskset', '-c', cpus, ...command];
    const child = spawn(file!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await listeningUrl(child).catch((error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    });
    return new HttpServer(spec, new URL(url), child);
  }

  get label(): string {
    return specLabel(this.spec);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** CPU time the server has used so far: the whole process and its main thread alone (undefined without /proc). */
  cpuTimes(): { processMs: number; mainThreadMs: number } | undefined {
    try {
      return {
        processMs: statCpuMs(`/proc/${this.pid}/stat`),
        mainThreadMs: statCpuMs(`/proc/${this.pid}/task/${this.pid}/stat`),
      };
    } catch {
      return undefined;
    }
  }

  /** Resident set size and its peak (VmRSS, VmHWM), in KiB; undefined without /proc. */
  memory(): { rssKb: number; peakKb: number } | undefined {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s*(\\d+)`, 'm').exec(status)?.[1]);
      const m = { rssKb: kb('VmRSS'), peakKb: kb('VmHWM') };
      return Number.isFinite(m.rssKb) && Number.isFinite(m.peakKb) ? m : undefined;
    } catch {
      return undefined;
    }
  }

  /** Sets the peak (VmHWM) back to the current RSS (`clear_refs` 5); false where the kernel does not allow it. */
  resetPeak(): boolean {
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      return true;
    } catch {
      return false;
    }
  }

  /** POSTs `wire` (or sends `method` without a body); `onRequest` gets the request, to destroy it (a closed stream). */
  send(wire: WireRequest | undefined, method = 'POST', onRequest?: (req: ClientRequest) => void): Promise<HttpAnswer> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      const req = request(this.url, { method, agent: this.agent, headers: wire?.headers ?? {} }, (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, endedAt: performance.now() }),
        );
        res.once('error', reject);
      });
      req.once('error', reject);
      onRequest?.(req);
      req.end(wire?.body);
    });
  }

  /** Sends a request and reads the response to its id out of the answer. */
  async ask(wire: WireRequest, id: string, onRequest?: (req: ClientRequest) => void): Promise<Outcome> {
    const a = await this.send(wire, 'POST', onRequest);
    return readOutcome(a.headers['content-type'], a.text, id);
  }

  /** A 2026 `spin` call; true when it was answered with a result. */
  async spin2026(args: Record<string, unknown>, onRequest?: (req: ClientRequest) => void): Promise<boolean> {
    const id = uniqueId();
    return (
      (await this.ask(modernRequest(id, 'tools/call', { name: 'spin', arguments: args }), id, onRequest)).kind ===
      'result'
    );
  }

  /** A 2025 `spin` call in `session`; true when it was answered with a result. */
  async spin2025(
    session: LegacySession,
    args: Record<string, unknown>,
    id = uniqueId(),
    onRequest?: (req: ClientRequest) => void,
  ): Promise<boolean> {
    return (
      (
        await this.ask(
          legacyRequest(id, 'tools/call', { name: 'spin', arguments: args }, session.id, session.version),
          id,
          onRequest,
        )
      ).kind === 'result'
    );
  }

  /** `notifications/cancelled` for request `id` of `session`, as its own POST. */
  async cancel2025(session: LegacySession, id: string): Promise<void> {
    const a = await this.send(
      legacyRequest(
        undefined,
        'notifications/cancelled',
        { requestId: id, reason: 'bench' },
        session.id,
        session.version,
      ),
    );
    if (a.status >= 300)
      throw new Error(`${this.label}: notifications/cancelled answered HTTP ${a.status}: ${a.text.slice(0, 200)}`);
  }

  /** Opens a 2025 session: `initialize`, then `notifications/initialized`. */
  async openSession(): Promise<LegacySession> {
    const id = uniqueId();
    const a = await this.send(initializeRequest(id));
    const sid = a.headers['mcp-session-id'];
    const outcome = readOutcome(a.headers['content-type'], a.text, id);
    if (typeof sid !== 'string' || outcome.kind !== 'result')
      throw new Error(`${this.label}: initialize failed (HTTP ${a.status}): ${a.text.slice(0, 300)}`);
    const session = {
      id: sid,
      version: typeof outcome.result.protocolVersion === 'string' ? outcome.result.protocolVersion : LEGACY_VERSION,
    };
    const done = await this.send(
      legacyRequest(undefined, 'notifications/initialized', undefined, session.id, session.version),
    );
    if (done.status >= 300) throw new Error(`${this.label}: notifications/initialized answered HTTP ${done.status}`);
    return session;
  }

  /** The server's counters, read through `session`: ours' executor://stats, a baseline's bench://stats. */
  async stats(session: LegacySession): Promise<Record<string, number>> {
    const id = uniqueId();
    const uri = this.spec.kind === 'ours' ? 'executor://stats' : 'bench://stats';
    const o = await this.ask(legacyRequest(id, 'resources/read', { uri }, session.id, session.version), id);
    if (o.kind !== 'result') throw new Error(`${this.label}: reading ${uri} failed: ${JSON.stringify(o)}`);
    const content = (o.result.contents as { text?: string }[] | undefined)?.[0];
    return JSON.parse(content?.text ?? '{}') as Record<string, number>;
  }

  /**
   * How many cancelled calls have stopped so far: ours' `cancelled` −
   * `stopping`, a baseline's `stopped` (as bench/lib/servers.ts's `stoppedCount`).
   */
  async stoppedCount(session: LegacySession): Promise<number> {
    const stats = await this.stats(session);
    return this.spec.kind === 'ours' ? (stats.cancelled ?? 0) - (stats.stopping ?? 0) : (stats.stopped ?? 0);
  }

  /** How many calls the server holds now (ours: `inFlight`) or has begun so far (a baseline: `started`). */
  async callsSeen(session: LegacySession): Promise<number> {
    const stats = await this.stats(session);
    return (this.spec.kind === 'ours' ? stats.inFlight : stats.started) ?? 0;
  }

  async close(): Promise<void> {
    this.agent.destroy();
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** One caller of a closed loop: sends one zero-work call and says whether it succeeded. */
export type Caller = () => Promise<boolean>;

/** A closed-loop window's counts: successes only make calls; failures are counted apart. */
export interface LoadWindow {
  calls: number;
  failures: number;
  seconds: number;
  serverCpuMs?: number;
  serverMainCpuMs?: number;
  clientCpuMs: number;
}

/**
 * Closed loop: each caller sends its next call when its last is answered, for
 * `windowMs`; `latencies` (µs) gets each successful call's round trip when
 * given. A call that fails (an error answer, a reset socket) is counted, not
 * timed, and its caller goes on.
 */
export async function httpThroughput(
  server: HttpServer,
  callers: readonly Caller[],
  windowMs: number,
  latencies?: number[],
): Promise<LoadWindow> {
  let calls = 0;
  let failures = 0;
  const cpu0 = server.cpuTimes();
  const client0 = process.cpuUsage();
  const start = performance.now();
  const end = start + windowMs;
  let last = start;
  const loop = async (caller: Caller) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await caller().catch(() => false);
      last = performance.now();
      if (ok) {
        calls++;
        latencies?.push(us(last - t0));
      } else failures++;
    }
  };
  await Promise.all(callers.map(loop));
  const cpu1 = server.cpuTimes();
  const client = process.cpuUsage(client0);
  return {
    calls,
    failures,
    seconds: (last - start) / 1000,
    ...(cpu0 &&
      cpu1 && { serverCpuMs: cpu1.processMs - cpu0.processMs, serverMainCpuMs: cpu1.mainThreadMs - cpu0.mainThreadMs }),
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

/** Runs `step` on `items` with at most `width` at once, in order of start. */
export async function inBatches<T, R>(items: readonly T[], width: number, step: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await step(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}
