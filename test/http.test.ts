/**
 * Seed section 6 and the HTTP-specific ways to cancel, over real Streamable
 * HTTP on 127.0.0.1 against the server subprocess.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sleep, startHttpServer, stats, until, type HttpServerProcess } from './helpers.js';
import { sseMessages, type Msg } from './http-helpers.js';
import { recordWire } from './wire-recorder.js';

let server: HttpServerProcess;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startHttpServer(['--threads', '2', '--grace-ms', '10000']);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.stop();
});

async function connect(): Promise<{
  client: Client;
  transport: StreamableHTTPClientTransport;
  received: Msg[];
  sent: Msg[];
}> {
  const transport = new StreamableHTTPClientTransport(server.url);
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  const { received, sent } = recordWire(transport);
  return { client, transport, received: received, sent: sent };
}

/** A raw POST in an existing session; returns the response once headers arrived, and an abort handle. */
async function rawPost(sessionId: string, body: unknown, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(server.url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { res, abort: () => controller.abort() };
}

/** Counters are process-wide; tests compare before and after. */
async function delta<T>(client: Client, run: () => Promise<T>): Promise<{ value: T; change: Record<string, number> }> {
  const before = await stats(client);
  const value = await run();
  const after = await stats(client);
  const change: Record<string, number> = {};
  for (const [k, v] of Object.entries(after))
    if (typeof v === 'number') change[k] = v - ((before as unknown as Record<string, number>)[k] ?? 0);
  return { value, change };
}

describe('over Streamable HTTP', () => {
  it('cancel while running (the cancel travels on its own POST): work stops and no response is sent', async () => {
    const { client, received, sent } = await connect();
    const { change } = await delta(client, async () => {
      const controller = new AbortController();
      let progress = 0;
      const call = client.callTool({ name: 'spin', arguments: { ms: 20_000 } }, undefined, {
        signal: controller.signal,
        onprogress: () => progress++,
      });
      await until(() => progress > 0, 10_000, 'progress');
      controller.abort('stop');
      await expect(call).rejects.toThrow();
      await until(async () => (await stats(client)).running === 0, 5_000, 'worker released');
      const id = sent.find((m) => m.method === 'tools/call')?.id;
      await sleep(200);
      expect(received.filter((m) => m.id === id && m.method === undefined)).toEqual([]);
    });
    expect(change).toMatchObject({ cancelled: 1, completed: 0, hardKilled: 0, responsesDropped: 0 });
  });

  it('completion before the cancel: the result stands, the late cancel is ignored in silence', async () => {
    const { client, received, sent } = await connect();
    const { change } = await delta(client, async () => {
      const result = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
      expect(result.isError).toBeFalsy();
      const id = sent.find((m) => m.method === 'tools/call')!.id as number;
      const before = received.length;
      await client.notification({ method: 'notifications/cancelled', params: { requestId: id } });
      await client.notification({ method: 'notifications/cancelled', params: { requestId: 'never-sent' } });
      await sleep(100);
      expect(received.length).toBe(before);
    });
    expect(change).toMatchObject({ completed: 1, cancelled: 0, unknownCancelsIgnored: 2 });
  });

  it('a cancel from another session cannot reach this session’s request', async () => {
    const a = await connect();
    const b = await connect();
    const { value: result, change } = await delta(a.client, async () => {
      const call = a.client.callTool({ name: 'spin', arguments: { ms: 400 } });
      await sleep(50);
      const id = a.sent.find((m) => m.method === 'tools/call')!.id as number;
      await b.client.notification({ method: 'notifications/cancelled', params: { requestId: id } });
      return call;
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ sliceCount: 400 }); // ran to the end
    // Session b's cancel found nothing of its own: ignored as unknown, and a's call completed.
    expect(change).toMatchObject({ completed: 1, cancelled: 0, unknownCancelsIgnored: 1, lateCancelsIgnored: 0 });
  });

  it('a client that drops the response stream of a pending POST has cancelled it', async () => {
    const { client, transport } = await connect();
    const { change } = await delta(client, async () => {
      const { res, abort } = await rawPost(transport.sessionId!, {
        jsonrpc: '2.0',
        id: 'dropped',
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 20_000 } },
      });
      expect(res.status).toBe(200);
      await sleep(100);
      abort();
      await until(async () => (await stats(client)).running === 0, 5_000, 'worker released');
    });
    expect(change).toMatchObject({ cancelled: 1, hardKilled: 0 });
  });

  it('a batch POST with a call cancelled mid-run: the others are answered, then the stream ends; the cancelled call gets nothing', async () => {
    const { client, transport } = await connect();
    const call = (id: string, ms: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms } },
    });
    const { change } = await delta(client, async () => {
      // The cancel wins while the batch's other call still runs…
      const first = await rawPost(transport.sessionId!, [
        call('b1-cancel', 20_000),
        call('b1-ok', 400),
        { jsonrpc: '2.0', id: 'b1-ping', method: 'ping' },
      ]);
      const one = sseMessages(first.res);
      await until(async () => (await stats(client)).running === 2, 5_000, 'both calls running');
      await client.notification({ method: 'notifications/cancelled', params: { requestId: 'b1-cancel' } });
      await expect(
        Promise.race([one.ended, sleep(10_000).then(() => Promise.reject(new Error('stream never ended')))]),
      ).resolves.toBeUndefined();
      expect(one.messages.map((m) => m.id).sort()).toEqual(['b1-ok', 'b1-ping']);
      expect(one.messages.find((m) => m.id === 'b1-ok')).toHaveProperty('result.structuredContent.sliceCount', 400);

      // …and after it was answered.
      const second = await rawPost(transport.sessionId!, [call('b2-cancel', 20_000), call('b2-ok', 1)]);
      const two = sseMessages(second.res);
      await until(() => two.messages.length === 1, 5_000, 'the short call answered');
      await until(async () => (await stats(client)).running === 1, 5_000, 'the long call running alone');
      await client.notification({ method: 'notifications/cancelled', params: { requestId: 'b2-cancel' } });
      await expect(
        Promise.race([two.ended, sleep(10_000).then(() => Promise.reject(new Error('stream never ended')))]),
      ).resolves.toBeUndefined();
      expect(two.messages.map((m) => m.id)).toEqual(['b2-ok']);
      await until(async () => (await stats(client)).running === 0, 5_000, 'workers released');
    });
    expect(change).toMatchObject({ cancelled: 2, completed: 2, responsesDropped: 0 });
  });

  it('DELETE of the session cancels what it still runs', async () => {
    const watcher = await connect();
    const victim = await connect();
    const { change } = await delta(watcher.client, async () => {
      const call = victim.client.callTool({ name: 'spin', arguments: { ms: 20_000 } }).catch((e: unknown) => e);
      await until(async () => (await stats(watcher.client)).running >= 1, 5_000, 'job running');
      await victim.transport.terminateSession();
      await until(async () => (await stats(watcher.client)).running === 0, 5_000, 'worker released');
      void call;
    });
    expect(change).toMatchObject({ cancelled: 1, completed: 0 });
  });

  it('rejects foreign Host and Origin headers (DNS rebinding)', async () => {
    const { transport } = await connect();
    const body = { jsonrpc: '2.0', id: 'x', method: 'tools/list' };
    const evilOrigin = await rawPost(transport.sessionId!, body, { origin: 'http://evil.example' });
    expect(evilOrigin.res.status).toBe(403);
    const goodOrigin = await rawPost(transport.sessionId!, body, { origin: `http://localhost:${server.url.port}` });
    expect(goodOrigin.res.status).toBe(200);
    await goodOrigin.res.text();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.url.port,
          path: server.url.pathname,
          method: 'POST',
          headers: {
            host: `evil.example:${server.url.port}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    expect(status).toBe(403);
  });

  it('answers malformed and oversized bodies with JSON-RPC errors and keeps serving', async () => {
    const { client, transport } = await connect();
    const bad = await rawPost(transport.sessionId!, '{ nope');
    expect(bad.res.status).toBe(400);
    expect(((await bad.res.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const big = await rawPost(transport.sessionId!, {
      jsonrpc: '2.0',
      id: 'big',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 1, pad: 'x'.repeat(5 * 1024 * 1024) } },
    });
    expect(big.res.status).toBe(413);
    expect(((await big.res.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const unknown = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(unknown.isError).toBeFalsy();
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/);
  });

  it('storm over HTTP: each call ends exactly one way', async () => {
    const { client, received, sent } = await connect();
    const n = 120;
    const { change } = await delta(client, async () => {
      await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const controller = new AbortController();
          const p = client.callTool({ name: 'spin', arguments: { ms: i % 3, stageMs: 0.5, tag: i } }, undefined, {
            signal: controller.signal,
          });
          if (i % 4 !== 0) setTimeout(() => controller.abort('storm'), (i * 7) % 15);
          return p.catch(() => undefined);
        }),
      );
      await until(async () => (await stats(client)).inFlight === 0, 20_000, 'settled');
      await sleep(200);
    });
    let silent = 0;
    for (let i = 0; i < n; i++) {
      const id = sent.find((m) => m.method === 'tools/call' && (m.params?.arguments as { tag?: number }).tag === i)!.id;
      const replies = received.filter((m) => m.id === id && m.method === undefined);
      expect(replies.length).toBeLessThanOrEqual(1);
      if (replies.length === 0) silent++;
    }
    expect(change.cancelled).toBe(silent);
    expect(change.completed! + change.cancelled!).toBe(n);
  });
});

describe('session expiry', () => {
  it('closes a session idle past --session-idle-ms; its id is then refused', async () => {
    const short = await startHttpServer(['--threads', '1', '--session-idle-ms', '1000']);
    try {
      const transport = new StreamableHTTPClientTransport(short.url);
      const client = new Client({ name: 'idle', version: '1.0.0' });
      await client.connect(transport);
      const sessionId = transport.sessionId!;
      expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
      const post = () =>
        fetch(short.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': sessionId,
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 'late', method: 'tools/list' }),
        });
      // Every request refreshes the session, so stay away for a while, then ask once.
      await sleep(2_500);
      expect((await post()).status).toBe(404);
    } finally {
      await short.stop();
    }
  });
});
