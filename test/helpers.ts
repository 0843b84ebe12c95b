/** Spawning the real server and talking to it, for the wire tests. */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ServerStats } from '../dist/src/entries/server.js';
import { recordWire } from './wire-recorder.js';

export const CLI = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
export const CLIENT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/client-tools.js', import.meta.url));

/**
 * Appended to a probe's short `--samples 2` where a real server must come out clean on the CPU rules. A server's
 * first cancel runs its cancel path cold (compiling it), and on a loaded machine that one sample burned 100-190 ms
 * of CPU in its window where the others burned 30-60 (ours over HTTP, under four CPU hogs); `cancel.work-stops`
 * takes the median, which of two samples is their mean. Of three it is a median.
 */
export const CLEAN_SAMPLES = ['--samples', '3'] as const;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** An SDK client connected to a server subprocess over stdio, recording every message on the wire. */
export interface WiredClient {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the server sent, in order. */
  received: JSONRPCMessage[];
  /** Everything the client sent, in order. */
  sent: JSONRPCMessage[];
  /** Errors the SDK client reported (e.g. responses for unknown ids). */
  errors: Error[];
  close(): Promise<void>;
}

/** `env` is laid over the SDK's default environment for the server. */
export async function stdioClient(
  args: string[] = [],
  capabilities: Record<string, unknown> = {},
  env?: Record<string, string>,
): Promise<WiredClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', ...args],
    stderr: 'pipe',
    ...(env && { env: { ...getDefaultEnvironment(), ...env } }),
  });
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  const { received, sent } = recordWire(transport);
  return { client, transport, received, sent, errors, close: () => client.close() };
}

/** The one stats helper of the tests: reads `executor://stats` through any SDK client. */
export async function stats(client: {
  readResource(p: { uri: string }): Promise<{ contents: unknown[] }>;
}): Promise<ServerStats> {
  const r = await client.readResource({ uri: 'executor://stats' });
  const first = r.contents[0] as { text: string };
  return JSON.parse(first.text) as ServerStats;
}

/** Waits until `check` is true, polling; fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A server subprocess spoken to in raw JSON-RPC lines, for what an SDK client would never send. */
export class RawServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: unknown[] = [];
  readonly exited: Promise<number | null>;
  stderr = '';
  private waiters: (() => void)[] = [];

  constructor(args: string[] = []) {
    this.child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: 'pipe' });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(JSON.parse(line));
      for (const w of this.waiters.splice(0)) w();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  send(message: unknown): void {
    this.child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
  }

  /** Waits for the first line (from `from` on) that matches. */
  async next(match: (m: Record<string, unknown>) => boolean, ms = 30_000, from = 0): Promise<Record<string, unknown>> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.lines.slice(from).find((m) => match(m as Record<string, unknown>));
      if (found) return found as Record<string, unknown>;
      const left = end - Date.now();
      if (left <= 0)
        throw new Error(
          `no matching message within ${ms} ms; got ${JSON.stringify(this.lines.slice(from)).slice(0, 500)}; stderr: ${this.stderr.slice(-500)}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Performs the initialize handshake. */
  async initialize(capabilities: Record<string, unknown> = {}): Promise<void> {
    this.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } },
    });
    // Start-up (a Node process, its worker pool, the tool modules) is what a loaded machine slows most: a bound on a hang, not a speed target.
    await this.next((m) => m.id === 'init', 60_000);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** Reads the stats resource over the raw wire. */
  async stats(): Promise<Record<string, number>> {
    const id = `stats-${Math.random()}`;
    this.send({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri: 'executor://stats' } });
    const m = (await this.next((x) => x.id === id)) as { result: { contents: { text: string }[] } };
    return JSON.parse(m.result.contents[0]!.text) as Record<string, number>;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/** The server subprocess over Streamable HTTP on 127.0.0.1, with its URL read from its log. */
export interface HttpServerProcess {
  url: URL;
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Ends a server subprocess with SIGTERM and waits until it has exited (at once if it already has). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export async function startHttpServer(args: string[] = []): Promise<HttpServerProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--transport', 'http', '--port', '0', ...args], {
    stdio: 'pipe',
  });
  let stderr = '';
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 60_000); // a bound on a hang (start-up on a loaded machine)
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(new URL(m[1]!));
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: () => stopChild(child),
  };
}
