/**
 * A server subprocess spoken to in raw lines, whose stdout the test can stop
 * and resume reading (to make the server's output back up), and whose memory
 * it can read. For the stdio hardening and fuzz tests.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI, sleep } from './helpers.js';

export type Wire = Record<string, unknown>;

export class LineServer {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every line the server wrote, parsed (a line that is not JSON is kept as `{ unparsed: line }`). */
  readonly lines: Wire[] = [];
  readonly exited: Promise<number | null>;
  stderr = '';
  private partial = '';

  /** `nodeArgs` go to node itself, before the CLI (a heap cap, say); `env` is added to this process's environment. */
  constructor(args: string[] = [], nodeArgs: string[] = [], env?: Record<string, string>) {
    this.child = spawn(process.execPath, [...nodeArgs, CLI, 'serve', ...args], {
      stdio: 'pipe',
      ...(env && { env: { ...process.env, ...env } }),
    });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stdin.on('error', () => undefined); // the server may be gone when a test writes
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  private onData(d: Buffer): void {
    const parts = (this.partial + d.toString('utf8')).split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      try {
        this.lines.push(JSON.parse(line) as Wire);
      } catch {
        this.lines.push({ unparsed: line });
      }
    }
  }

  /** Stops reading the server's stdout: once the pipe and our small read buffer fill, the server's writes back up. */
  stopReading(): void {
    this.child.stdout.pause();
  }

  resumeReading(): void {
    this.child.stdout.resume();
  }

  send(message: unknown): void {
    this.child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
  }

  /**
   * Writes `lines` in 16 KiB pieces, one at a time, until they are all sent or
   * the server stops reading (no piece accepted for `stallMs`); then queues
   * the rest here, to reach the server once it reads again.
   * (`writableLength` is no measure: one big write only settles at its end.)
   * @returns how many bytes the server had taken when the writing stopped, of how many
   */
  async flood(lines: readonly string[], stallMs: number): Promise<{ taken: number; total: number }> {
    const pieces: string[] = [];
    let piece = '';
    for (const line of lines) {
      piece += line + '\n';
      if (piece.length >= 16 * 1024) {
        pieces.push(piece);
        piece = '';
      }
    }
    if (piece) pieces.push(piece);
    const total = pieces.reduce((n, p) => n + p.length, 0);
    let taken = 0;
    for (let i = 0; i < pieces.length; i++) {
      const written = new Promise<boolean>((resolve) => this.child.stdin.write(pieces[i]!, () => resolve(true)));
      const accepted = await Promise.race([written, sleep(stallMs).then(() => false)]);
      if (!accepted) {
        for (const rest of pieces.slice(i + 1)) this.child.stdin.write(rest);
        return { taken, total };
      }
      taken += pieces[i]!.length;
    }
    return { taken, total };
  }

  /** The server's resident memory in MB, from /proc. */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
  }

  /** Waits until `check` holds; fails after `ms` with what was seen. */
  async until(check: () => boolean, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end)
        throw new Error(
          `timed out waiting for ${what}; last lines ${JSON.stringify(this.lines.slice(-3)).slice(0, 400)}; stderr ${this.stderr.slice(-600)}`,
        );
      if (this.child.exitCode !== null)
        throw new Error(
          `server exited with ${this.child.exitCode} while waiting for ${what}; stderr ${this.stderr.slice(-600)}`,
        );
      await sleep(10);
    }
  }

  /** The first line with this id (from `from` on), waiting for it. */
  async answer(id: unknown, ms = 10_000, from = 0): Promise<Wire> {
    let found: Wire | undefined;
    await this.until(
      () => (found = this.lines.slice(from).find((m) => m.id === id && !('method' in m))) !== undefined,
      ms,
      `the answer to ${JSON.stringify(id)}`,
    );
    return found!;
  }

  async initialize(): Promise<void> {
    this.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'line', version: '1' } },
    });
    // Start-up on a loaded machine: a bound on a hang, not a speed target (as RawServer.initialize).
    await this.answer('init', 60_000);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** How many times each id was answered (responses only, not the server's own requests). */
export function answerCounts(lines: readonly Wire[]): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  for (const m of lines) if ('id' in m && !('method' in m)) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return counts;
}
