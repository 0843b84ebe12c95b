/**
 * A bare JSON-RPC client over a server's stdin/stdout, for throughput
 * windows: one line out per call, responses matched by id, nothing else. The
 * SDK `Client` spends 20+ µs of CPU per call validating and routing, which on
 * a shared machine dilutes every server-to-server ratio; this one spends a
 * few. Each server can be pinned to its own cores (`taskset`), so the client
 * and the server do not compete for one.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { statCpuMs } from '#dist/src/probe/cpu.js';
import { serverCommand, specLabel, type ServerSpec } from './servers.js';

interface Pending {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** One server process driven by raw JSON-RPC lines. */
export class RawConnection {
  stderrTail = '';
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private rest = '';
  private lost: Error | undefined;

  private constructor(
    readonly spec: ServerSpec,
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
  ) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.onData(chunk));
    child.stderr.on(
      'data',
      (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4096)),
    );
    child.once('exit', (code) => {
      this.lost = new Error(`${this.label}: the server exited (${code}); its stderr ended with:\n${this.stderrTail}`);
      for (const p of this.pending.values()) p.reject(this.lost);
      this.pending.clear();
    });
  }

  /** Starts the server (under `taskset -c cpus` when given) and completes the MCP handshake. */
  static async open(spec: ServerSpec, cpus?: string): Promise<RawConnection> {
    if (spec.transport !== 'stdio') throw new Error('the raw client speaks stdio only');
    const command = [process.execPath, ...serverCommand(spec)];
    const [file, ...args] = cpus === undefined ? command : ['taskset', '-c', cpus, ...command];
    const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const conn = new RawConnection(spec, child);
    await conn.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'bench-raw', version: '0.0.0' },
    });
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    return conn;
  }

  get label(): string {
    return specLabel(this.spec);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** CPU time the server has used so far: the whole process and its main thread alone. */
  cpuTimes(): { processMs: number; mainThreadMs: number } | undefined {
    const pid = this.pid;
    if (pid === undefined) return undefined;
    try {
      return { processMs: statCpuMs(`/proc/${pid}/stat`), mainThreadMs: statCpuMs(`/proc/${pid}/task/${pid}/stat`) };
    } catch {
      return undefined;
    }
  }

  /** A zero-work `spin` call; resolves on its response (a JSON-RPC error rejects). */
  callSpin(args: { ms: number }): Promise<void> {
    return this.request('tools/call', { name: 'spin', arguments: args });
  }

  async warm(): Promise<void> {
    await this.callSpin({ ms: 0 });
  }

  private request(method: string, params: unknown): Promise<void> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(
        `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}\n`,
      );
    });
  }

  private onData(chunk: string): void {
    const text = this.rest + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      const message = JSON.parse(line) as { id?: number; result?: { isError?: boolean }; error?: { message: string } };
      if (typeof message.id !== 'number') continue; // a notification
      const p = this.pending.get(message.id);
      if (!p) continue;
      this.pending.delete(message.id);
      if (message.error) p.reject(new Error(`${this.label}: ${message.error.message}`));
      else if (message.result?.isError) p.reject(new Error(`${this.label}: tool error ${line.slice(0, 300)}`));
      else p.resolve();
    }
    this.rest = text.slice(start);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** Pins every thread of this process to `cpus` (taskset list syntax); returns the previous list, to restore. */
export async function pinSelf(cpus: string): Promise<string | undefined> {
  const { execFileSync } = await import('node:child_process');
  try {
    const before = /:\s*(\S+)\s*$/.exec(
      execFileSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' }),
    )?.[1];
    execFileSync('taskset', ['-a', '-cp', cpus, String(process.pid)], { stdio: 'ignore' });
    return before;
  } catch {
    return undefined; // no taskset: run unpinned
  }
}
