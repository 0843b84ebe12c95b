/** The queue backend behind Streamable HTTP: a dropped response stream and a closed session cancel on the worker host. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sleep, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const Q = 'http';
let redis: RedisProcess;
let r: Redis;
let host: HostProcess;
let server: HttpServerProcess;

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  host = await startHost(redis.url, Q, ['--threads', '1']);
  server = await startHttpServer(['--redis', redis.url, '--queue', Q]);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await host?.stop();
  await redis?.stop();
});

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(server.url);
  const client = new Client({ name: 'remote-http', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function relayed(): Promise<number> {
  return (await host.stats(r)).cancelsRelayed ?? 0;
}

it('answers a call from a worker host over HTTP', async () => {
  const { client } = await connect();
  await until(
    async () => (await client.callTool({ name: 'spin', arguments: { ms: 3 } })).isError !== true,
    15_000,
    'a call through Redis',
  );
  await client.close();
});

it('a dropped response stream cancels the call on its host', async () => {
  const { client, transport } = await connect();
  const before = await relayed();
  const controller = new AbortController();
  const res = await fetch(server.url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'dropped',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 60_000 } },
    }),
  });
  expect(res.status).toBe(200);
  await until(async () => (await host.stats(r)).running === 1, 10_000, 'the call running on the host');
  controller.abort();
  await until(async () => (await relayed()) === before + 1, 10_000, 'the cancel relayed to the host');
  await until(async () => (await host.stats(r)).running === 0, 5000, 'the host free');
  await client.close();
});

it('a closed session cancels its calls on the host', async () => {
  const { client, transport } = await connect();
  const before = await relayed();
  void client.callTool({ name: 'spin', arguments: { ms: 60_000 } }).catch(() => undefined);
  await until(async () => (await host.stats(r)).running === 1, 10_000, 'the call running on the host');
  await transport.terminateSession(); // DELETE: the session ends
  await until(async () => (await relayed()) === before + 1, 10_000, 'the cancel relayed to the host');
  await until(async () => (await host.stats(r)).running === 0, 5000, 'the host free');
  await sleep(100);
  await client.close();
});
