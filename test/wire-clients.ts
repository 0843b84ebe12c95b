/** One SDK client API over either transport, recording the wire, so a test can run over stdio and HTTP alike. */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, stdioClient, type HttpServerProcess } from './helpers.js';
import { recordWire } from './wire-recorder.js';

export const REPORT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/report-tools.js', import.meta.url));

export type Msg = JSONRPCMessage & {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
};

export interface Wired {
  client: Client;
  /** Everything the server sent, in arrival order. */
  received: Msg[];
  /** Everything the client sent, in order. */
  sent: Msg[];
  close(): Promise<void>;
}

export type TransportKind = 'stdio' | 'http';

/** Starts a server with `args` and connects one client to it; `close` stops both. */
export async function connectWired(kind: TransportKind, args: string[]): Promise<Wired> {
  if (kind === 'stdio') {
    const w = await stdioClient(args);
    return { client: w.client, received: w.received, sent: w.sent, close: () => w.close() };
  }
  const server: HttpServerProcess = await startHttpServer(args);
  const transport = new StreamableHTTPClientTransport(server.url);
  const client = new Client({ name: 'wire-test', version: '1.0.0' });
  await client.connect(transport);
  const { received, sent } = recordWire(transport);
  return {
    client,
    received: received,
    sent: sent,
    close: async () => {
      await client.close().catch(() => undefined);
      await server.stop();
    },
  };
}
