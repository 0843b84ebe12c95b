/**
 * Revision 2026-07-28 over Streamable HTTP on 127.0.0.1, the server as a
 * subprocess: raw POSTs (headers, status codes, closed streams) and a 2.x SDK
 * client pinned to the modern era; a 2025 client on the same endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sleep, startHttpServer, type HttpServerProcess } from './helpers.js';
import { messagesIn, sseMessages, type Msg } from './http-helpers.js';
import { MODERN, modernHeaders, modernHttp, modernRequest, modernStats } from './modern-helpers.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
type Stats = Record<
  'completed' | 'cancelled' | 'inFlight' | 'running' | 'responsesDropped' | 'hardKilled' | 'lateCancelsIgnored',
  number
>;

let server: HttpServerProcess;
beforeAll(async () => {
  server = await startHttpServer([
    '--threads',
    '1',
    '--spare-threads',
    '0',
    '--grace-ms',
    '10000',
    '--queue-limit',
    '5000',
  ]);
});
afterAll(async () => {
  await server.stop();
});

type Body = ReturnType<typeof modernRequest>;
/** A 2026 POST with the headers the body calls for (overridden by `headers`). */
function post(body: Body, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
}
let nextId = 0;
async function stats(): Promise<Stats> {
  const r = await post(modernRequest(`stats-${nextId++}`, 'resources/read', { uri: 'executor://stats' }));
  const m = messagesIn(await r.text()).find((x) => 'result' in x)!;
  return JSON.parse((m.result as { contents: { text: string }[] }).contents[0]!.text) as Stats;
}
async function settled(): Promise<Stats> {
  const end = Date.now() + 60_000;
  let s = await stats();
  while ((s.inFlight !== 0 || s.running !== 0) && Date.now() < end) {
    await sleep(100);
    s = await stats();
  }
  return s;
}

describe('2026-07-28 over Streamable HTTP', () => {
  it('results carry resultType and the serverInfo stamp; an SSE answer carries X-Accel-Buffering: no', async () => {
    const r = await post(
      modernRequest('call', 'tools/call', { name: 'spin', arguments: { ms: 3 }, _meta: { progressToken: 'p' } }),
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/event-stream/); // progress first: the answer streams
    expect(r.headers.get('x-accel-buffering')).toBe('no');
    const messages = messagesIn(await r.text());
    const result = messages.find((m) => m.id === 'call')!.result as Record<string, unknown>;
    expect(result.resultType).toBe('complete');
    expect((result._meta as Record<string, unknown>)[SERVER_INFO]).toMatchObject({ name: 'mcp-cancel-pool' });
    expect(messages.filter((m) => m.method === 'notifications/progress').length).toBeGreaterThan(0);
    const d = await post(modernRequest('discover', 'server/discover'));
    const discover = messagesIn(await d.text())[0]!.result as Record<string, unknown>;
    expect(discover).toMatchObject({
      supportedVersions: [MODERN],
      resultType: 'complete',
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
  });

  it('headers: a MCP-Protocol-Version or Mcp-Name that disagrees with the body is 400 (-32020); an unsupported revision is 400 with -32022 and data.supported', async () => {
    const list = modernRequest('h1', 'tools/list');
    const mismatch = await post(list, { 'mcp-protocol-version': '2025-11-25' });
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as Msg).error).toMatchObject({ code: -32020 });
    const name = await post(modernRequest('h2', 'tools/call', { name: 'spin', arguments: { ms: 1 } }), {
      'mcp-name': 'compress',
    });
    expect(name.status).toBe(400);
    expect(((await name.json()) as Msg).error).toMatchObject({ code: -32020 });
    const missing = await post(modernRequest('h3', 'tools/call', { name: 'spin', arguments: { ms: 1 } }), {
      'mcp-method': 'tools/list',
    });
    expect(missing.status).toBe(400);
    const old = await post(modernRequest('h4', 'tools/list', {}, { version: '2099-01-01' }), {
      'mcp-protocol-version': '2099-01-01',
    });
    expect(old.status).toBe(400);
    expect(((await old.json()) as Msg).error).toMatchObject({ code: -32022, data: { supported: [MODERN] } });
    expect((await stats()).inFlight).toBe(0);
  });

  it('GET and DELETE without a 2025 session are 405; ping and logging/setLevel do not exist', async () => {
    expect((await fetch(server.url, { method: 'GET', headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect((await fetch(server.url, { method: 'DELETE' })).status).toBe(405);
    const ping = messagesIn(await (await post(modernRequest('ping', 'ping'))).text())[0]!;
    expect(ping.error).toMatchObject({ code: -32601 });
    const level = messagesIn(
      await (await post(modernRequest('lvl', 'logging/setLevel', { level: 'debug' }))).text(),
    )[0]!;
    expect(level.error).toMatchObject({ code: -32601 });
  });

  it('closing the response stream cancels the call: the work stops, the slot is reused, nothing is killed; closes after an answer are not cancels', async () => {
    const before = await settled();
    // Answered calls: the SDK aborts their handler signal as each exchange ends; none may count as a cancel.
    for (let i = 0; i < 10; i++)
      expect(
        messagesIn(
          await (await post(modernRequest(`ok-${i}`, 'tools/call', { name: 'spin', arguments: { ms: 1 } }))).text(),
        ).some((m) => 'result' in m),
      ).toBe(true);
    const controller = new AbortController();
    const r = await post(
      modernRequest('long', 'tools/call', {
        name: 'spin',
        arguments: { ms: 20_000, stageMs: 1 },
        _meta: { progressToken: 'long' },
      }),
      {},
      controller.signal,
    );
    const { messages, ended } = sseMessages(r);
    const end = Date.now() + 10_000;
    while (messages.length === 0 && Date.now() < end) await sleep(10);
    expect(messages[0]?.method).toBe('notifications/progress');
    controller.abort();
    await ended.catch(() => undefined);
    const started = performance.now();
    const next = messagesIn(
      await (await post(modernRequest('next', 'tools/call', { name: 'spin', arguments: { ms: 1 } }))).text(),
    ).find((m) => m.id === 'next');
    expect(next).toHaveProperty('result');
    expect(performance.now() - started).toBeLessThan(5_000); // one thread, no standby: the 20 s call gave it back
    const after = await settled();
    expect(after.completed - before.completed).toBe(11);
    expect(after.cancelled - before.cancelled).toBe(1);
    expect(after.lateCancelsIgnored - before.lateCancelsIgnored).toBe(0);
    expect(after.hardKilled).toBe(0);
  });

  it('a 2.x SDK client in modern mode: aborting a call closes its stream, and that cancels it', async () => {
    const m = await modernHttp(server.url);
    try {
      const before = await modernStats(m.client);
      const controller = new AbortController();
      let progress = 0;
      const call = m.client.callTool(
        { name: 'spin', arguments: { ms: 20_000, stageMs: 1 }, _meta: { progressToken: 'sdk' } },
        { signal: controller.signal, onprogress: () => progress++ },
      );
      const end = Date.now() + 10_000;
      while (progress === 0 && Date.now() < end) await sleep(10);
      expect(progress).toBeGreaterThan(0);
      controller.abort('user stopped it');
      await expect(call).rejects.toThrow();
      const result = await m.client.callTool({ name: 'spin', arguments: { ms: 1 } });
      expect(result.isError).toBeFalsy();
      const after = await modernStats(m.client);
      expect(after.cancelled! - before.cancelled!).toBe(1);
      expect(after.completed! - before.completed!).toBe(1);
      expect(after.hardKilled).toBe(0);
    } finally {
      await m.close();
    }
  });

  it('a 2025 client and a 2026 client at once on one endpoint: each cancels its own way, each call ends one way', async () => {
    const legacyTransport = new StreamableHTTPClientTransport(server.url);
    const legacy = new Client({ name: 'legacy', version: '1' });
    await legacy.connect(legacyTransport);
    const modern = await modernHttp(server.url);
    try {
      expect(legacyTransport.sessionId).toBeDefined(); // 2025: a session; 2026: none
      const before = await stats();
      const legacyAbort = new AbortController();
      const modernAbort = new AbortController();
      const runs = [
        legacy.callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1 } }, undefined, {
          signal: legacyAbort.signal,
        }),
        modern.client.callTool(
          { name: 'spin', arguments: { ms: 20_000, stageMs: 1 } },
          {
            signal: modernAbort.signal,
          },
        ),
      ];
      const queued = legacy.callTool({ name: 'spin', arguments: { ms: 2 } });
      const modernDone = modern.client.callTool({ name: 'spin', arguments: { ms: 2 } });
      await sleep(300);
      legacyAbort.abort('2025 cancel: notifications/cancelled on its own POST');
      modernAbort.abort('2026 cancel: the stream closes');
      for (const run of runs) await expect(run).rejects.toThrow();
      expect((await queued).isError).toBeFalsy();
      expect((await modernDone).isError).toBeFalsy();
      const after = await settled();
      expect(after.cancelled - before.cancelled).toBe(2);
      expect(after.completed - before.completed).toBe(2);
      expect(after.hardKilled).toBe(0);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('storm: 2,000 randomized complete-vs-close races on 2026 streams; each call ends exactly one way and the counters add up', async () => {
    const before = await settled();
    const n = 2000;
    let seed = 0x7e57;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    let answered = 0;
    let errors = 0;
    let closedUnanswered = 0;
    let next = 0;
    const one = async (i: number) => {
      const controller = new AbortController();
      const closes = random() < 0.75;
      const delay = Math.floor(random() * 12);
      let timer: NodeJS.Timeout | undefined;
      try {
        // A fifth of the closed calls spin far longer than any close delay, so cancels win however fast the machine is;
        // the rest are true races (1–3 ms of work against a 0–11 ms close), decided either way.
        const ms = closes && random() < 0.2 ? 10_000 : 1 + Math.floor(random() * 3);
        const r = await post(
          modernRequest(`s${i}`, 'tools/call', {
            name: 'spin',
            arguments: { ms, stageMs: 0.5 },
            _meta: { progressToken: `s${i}` },
          }),
          {},
          controller.signal,
        );
        // The stream is open (its first progress, or the answer, is on the way): the server has the call, so each
        // close races a call it knows. A close before that could beat the request itself, and then there is no race.
        if (closes) timer = setTimeout(() => controller.abort(), delay);
        const text = await r.text();
        const answer = messagesIn(text).find((m) => m.id === `s${i}`);
        if (answer && 'result' in answer) answered++;
        else errors++;
      } catch {
        if (!closes) throw new Error(`call ${i} failed without being closed`);
        closedUnanswered++;
      } finally {
        clearTimeout(timer);
      }
    };
    // 16 streams open at a time: bounded, on loopback.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) await one(next++);
      }),
    );
    const after = await settled();
    const completed = after.completed - before.completed;
    const cancelled = after.cancelled - before.cancelled;
    expect(errors).toBe(0);
    expect(answered + closedUnanswered).toBe(n);
    expect(completed + cancelled).toBe(n); // each call ended exactly one way
    expect(cancelled).toBeGreaterThan(0);
    expect(cancelled).toBeLessThanOrEqual(closedUnanswered); // only a close that won the CAS counts
    expect(completed).toBeGreaterThanOrEqual(answered);
    expect(after.hardKilled).toBe(0);
    expect(after.responsesDropped - before.responsesDropped).toBe(0);
  }, 240_000);
});
