/**
 * The MCP server under OAuth for the authorization tests: started as a real
 * subprocess on a port picked first (its canonical resource URI names the
 * port), pointed at a {@link TestIssuer}; raw 2025 and 2026 requests with a
 * bearer token; SDK 2.x clients that get their own token by client
 * credentials, starting from the server's 401.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { freePort } from '../bench/lib/free-port.js';
import { CLI, stopChild } from './helpers.js';
import { initializeBody, messagesIn, MCP_HEADERS, type Msg } from './http-helpers.js';
import { MODERN, modernHeaders, modernRequest } from './modern-helpers.js';
import { CLIENTS, type ClientName } from './oidc-helpers.js';

export const SCOPED_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/scoped-tools.js', import.meta.url));

export { freePort };

/** A running server subprocess. */
export interface AuthServer {
  /** http://127.0.0.1:<port>/mcp, also its canonical resource URI. */
  readonly url: URL;
  readonly pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

/** The `--auth-client-credentials-file` of the server's own introspection client. */
export function credentialsFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-'));
  const file = join(dir, 'introspection.json');
  writeFileSync(file, JSON.stringify({ client_id: CLIENTS.rs.id, client_secret: CLIENTS.rs.secret }));
  return file;
}

/** Starts `serve --transport http` on a fresh port with `--auth-issuer issuer --auth-resource <its /mcp URL>` and `args`. */
export async function startAuthServer(
  issuer: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<AuthServer> {
  // The resource URI names the port, so the port is picked before the server
  // binds it; another test's outgoing connection can take that ephemeral port
  // in between. Only that race is retried, with a fresh port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAuthServerOnce(issuer, args, env);
    } catch (err) {
      if (attempt >= 5 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

async function startAuthServerOnce(issuer: string, args: string[], env: Record<string, string>): Promise<AuthServer> {
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--transport',
      'http',
      '--port',
      String(port),
      '--threads',
      '1',
      '--tools',
      SCOPED_TOOLS,
      '--auth-issuer',
      issuer,
      '--auth-resource',
      url.href,
      ...args,
    ],
    {
      stdio: 'pipe',
      env: { ...process.env, ...env },
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen: ${stderr}`)), 60_000);
    const check = () => {
      if (/listening on/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  return { url, pid: child.pid!, stderr: () => stderr, stop: () => stopChild(child) };
}

/** The command line of a process as `ps` shows it. */
export function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

/** A raw HTTP answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly messages: Msg[];
}

/** POSTs `body` (a 2026 request when its `_meta` carries the envelope) with `token`. */
export async function postAs(
  url: URL,
  token: string | undefined,
  body: { method?: string; params?: Record<string, unknown> } & Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const modern =
    (body.params?._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/protocolVersion'] === MODERN;
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      ...MCP_HEADERS,
      ...(modern && modernHeaders(body as { method: string; params?: Record<string, unknown> })),
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  let messages: Msg[];
  try {
    messages =
      r.headers.get('content-type')?.includes('json') || r.headers.get('content-type')?.includes('event-stream')
        ? messagesIn(text)
        : [];
  } catch {
    messages = [];
  }
  return { status: r.status, headers: r.headers, text, messages };
}

/** A 2026 `tools/list` with `token`: 200 when the token is accepted. */
export function listTools2026(url: URL, token: string | undefined): Promise<Answer> {
  return postAs(url, token, modernRequest('list', 'tools/list'));
}

/** Opens a 2025 session with `token` (initialize + initialized); returns its id. */
export async function openSession(url: URL, token: string | undefined): Promise<string> {
  const init = await postAs(url, token, initializeBody());
  if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status} ${init.text}`);
  const sid = init.headers.get('mcp-session-id')!;
  await postAs(
    url,
    token,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  return sid;
}

/** A request inside 2025 session `sid`. */
export function inSession(url: URL, token: string, sid: string, body: Record<string, unknown>): Promise<Answer> {
  return postAs(url, token, body, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
}

/** An SDK 2.x client in `era` that gets its token itself: 401 → metadata → client credentials at the issuer → retry. */
export async function oauthClient(
  url: URL,
  issuer: string,
  name: ClientName,
  era: 'legacy' | 'modern',
  scope?: string,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const c = CLIENTS[name];
  const authProvider = new ClientCredentialsProvider({
    clientId: c.id,
    clientSecret: c.secret,
    expectedIssuer: issuer,
    ...(scope !== undefined && { scope }),
  });
  const transport = new StreamableHTTPClientTransport(url, { authProvider });
  const client = new Client({ name: `oauth-${name}`, version: '1.0.0' }, {
    versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: MODERN } },
  } as never);
  await client.connect(transport);
  return { client, close: () => client.close() };
}
