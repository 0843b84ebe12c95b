/** Raw HTTP helpers for the auth and limit tests: servers with their own env, requests with any Host header. */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CLI, stopChild } from './helpers.js';

export type Msg = JSONRPCMessage & {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
};

/** How a server subprocess went: it listened (traffic goes to 127.0.0.1 whatever it bound), or it exited. */
export type Started =
  | { kind: 'listening'; url: URL; pid: number; stderr: () => string; stop: () => Promise<void> }
  | { kind: 'exited'; code: number | null; stderr: string };

/** Starts `serve --transport http --port 0 …args` with `env` added to this process's environment. */
export function spawnHttp(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'serve', '--transport', 'http', '--port', '0', ...args], {
    stdio: 'pipe',
    env: { ...process.env, ...env },
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server neither listened nor exited: ${stderr}`)), 60_000); // a bound on a hang
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (!m) return;
      clearTimeout(timer);
      const url = new URL(m[1]!);
      url.hostname = '127.0.0.1';
      resolve({
        kind: 'listening',
        url,
        pid: child.pid!,
        stderr: () => stderr,
        stop: () => stopChild(child),
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ kind: 'exited', code, stderr });
    });
  });
}

/** Starts a server that must listen. */
export async function listening(
  args: string[],
  env: Record<string, string> = {},
): Promise<Extract<Started, { kind: 'listening' }>> {
  const s = await spawnHttp(args, env);
  if (s.kind !== 'listening') throw new Error(`server exited with ${s.code}: ${s.stderr}`);
  return s;
}

export const initializeBody = (id: string | number = 'init') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A POST through node:http, which (unlike fetch) may set any Host header; resolves with the whole response. */
export function post(
  url: URL,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        headers: { ...MCP_HEADERS, ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The JSON-RPC messages in an SSE or JSON response text. */
export function messagesIn(text: string): Msg[] {
  if (text.trimStart().startsWith('{') || text.trimStart().startsWith('[')) return [JSON.parse(text) as Msg].flat();
  return text
    .split('\n\n')
    .map((event) =>
      event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5))
        .join(''),
    )
    .filter((data) => data.trim())
    .map((data) => JSON.parse(data) as Msg);
}

/** An SDK client over Streamable HTTP, with extra headers on every request (e.g. the bearer token). */
export async function httpClient(
  url: URL,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'http-hardening-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** Reads the JSON-RPC messages of an SSE response body as they come; `ended` settles when the server ends the stream. */
export function sseMessages(res: globalThis.Response): { messages: Msg[]; ended: Promise<void> } {
  const messages: Msg[] = [];
  const ended = (async () => {
    let buffer = '';
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer
          .slice(0, cut)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5))
          .join('');
        buffer = buffer.slice(cut + 2);
        if (data.trim()) messages.push(JSON.parse(data) as Msg);
      }
    }
  })();
  return { messages, ended };
}

/** Rejects after `ms`, naming what did not happen in time. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
