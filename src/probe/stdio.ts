/**
 * The server under test as a child process, for the probe: newline-delimited
 * JSON-RPC on its stdin and stdout, its stderr kept for the report. The
 * probe's own, not an SDK client's, so that the default install runs it and
 * so that a call and its cancel can share one write ({@link writeTogether}).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';

/** How long `close` waits after ending stdin, then after SIGTERM, before the next step. */
const CLOSE_STEP_MS = 2000;

export class ProbeStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private child: ChildProcess | undefined;
  private buffer = '';

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly env: Record<string, string>,
  ) {}

  /** The child's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The child's stderr, once started. */
  get stderr(): Readable | null {
    return this.child?.stderr ?? null;
  }

  /** Starts the child; rejects when it cannot be spawned (no such command, …). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, [...this.args], {
        env: this.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.read(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
    });
  }

  private read(chunk: Buffer): void {
    this.buffer += chunk.toString('utf8');
    for (let end = this.buffer.indexOf('\n'); end !== -1; end = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      if (line.trim() === '') continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (error) {
        this.onerror?.(new Error(`unparsable line on stdout: ${line.slice(0, 120)} (${(error as Error).message})`));
        continue;
      }
      if (typeof message !== 'object' || message === null || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
        this.onerror?.(new Error(`not a JSON-RPC message: ${line.slice(0, 120)}`));
        continue;
      }
      this.onmessage?.(message as JSONRPCMessage);
    }
  }

  /** Writes one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  /** Writes several lines in one write (a call and its cancel in the same read of the server); false when not started. */
  writeTogether(lines: string): boolean {
    const stdin = this.child?.stdin;
    if (!stdin) return false;
    stdin.write(lines);
    return true;
  }

  private write(text: string): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error('not connected'));
    return new Promise((resolve) => {
      if (stdin.write(text)) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends stdin (how a stdio client closes), then SIGTERM, then SIGKILL, each after a short wait for the exit. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (ms: number) =>
      Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    child.stdin?.end();
    if (await within(CLOSE_STEP_MS)) return;
    child.kill('SIGTERM');
    if (await within(CLOSE_STEP_MS)) return;
    child.kill('SIGKILL');
    await exited;
  }
}
