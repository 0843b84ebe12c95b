/**
 * The 2026-07-28 era from the test's side: the per-request envelope for raw
 * JSON-RPC, and a 2.x SDK client pinned to the modern era (over stdio, the
 * server as a subprocess; over HTTP, a real socket on 127.0.0.1).
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CLI } from './helpers.js';

export const MODERN = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';

/** The per-request `_meta` envelope: version, capabilities (the tasks extension when `tasks`), client info, and extra keys. */
export function envelope(
  options: { tasks?: boolean; logLevel?: string; version?: string } = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': options.version ?? MODERN,
    'io.modelcontextprotocol/clientCapabilities': options.tasks ? { extensions: { [TASKS]: {} } } : {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' },
    ...(options.logLevel !== undefined && { 'io.modelcontextprotocol/logLevel': options.logLevel }),
    ...extra,
  };
}

/** A 2026 request: `params._meta` carries the envelope. */
export function modernRequest(
  id: string | number,
  method: string,
  params: Record<string, unknown> = {},
  options: Parameters<typeof envelope>[0] = {},
  extraMeta: Record<string, unknown> = {},
) {
  const meta = { ...((params._meta as Record<string, unknown> | undefined) ?? {}), ...envelope(options, extraMeta) };
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
}

/** The HTTP headers a 2026 POST must carry for this request. */
export function modernHeaders(
  body: { method: string; params?: Record<string, unknown> },
  version = MODERN,
): Record<string, string> {
  const name = (body.params?.name ?? body.params?.uri ?? body.params?.taskId) as string | undefined;
  return {
    'mcp-protocol-version': version,
    'mcp-method': body.method,
    ...(name !== undefined && { 'mcp-name': name }),
  };
}

/** A 2.x SDK client pinned to 2026-07-28. */
export function modernClient(): Client {
  return new Client(
    { name: 'modern-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
    },
  );
}

/** A modern client connected over stdio to the server as a subprocess. */
export async function modernStdio(
  args: string[],
): Promise<{ client: Client; transport: StdioClientTransport; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', ...args],
    stderr: 'pipe',
  });
  const client = modernClient();
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** A modern client connected over Streamable HTTP. */
export async function modernHttp(
  url: URL | string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = modernClient();
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** Reads `executor://stats` through a modern client. */
export async function modernStats(client: Client): Promise<Record<string, number>> {
  const r = await client.readResource({ uri: 'executor://stats' });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, number>;
}
