/**
 * Revision 2026-07-28 over stdio, the server as a subprocess: raw JSON-RPC
 * where the SDK would hide what must be checked, and a 2.x SDK client pinned
 * to the modern era.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LineServer, answerCounts, type Wire } from './line-client.js';
import { sleep, until } from './helpers.js';
import { MODERN, TASKS, modernRequest, modernStats, modernStdio } from './modern-helpers.js';
import { REPORT_TOOLS } from './wire-clients.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** A busy machine may take this long to start a server with its pool. */
const STARTUP_MS = 30_000;

let open: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});
function server(args: string[]): LineServer {
  const s = new LineServer(args);
  open.push({ close: () => s.kill() });
  return s;
}
type Stats = Record<'completed' | 'cancelled' | 'inFlight' | 'responsesDropped' | 'hardKilled', number>;
const resultOf = (m: Wire) => m.result as Record<string, unknown>;
const statsOf = async (s: LineServer, id: string) => {
  s.send(modernRequest(id, 'resources/read', { uri: 'executor://stats' }));
  const m = await s.answer(id, 60_000);
  return JSON.parse((resultOf(m).contents as { text: string }[])[0]!.text) as Stats;
};

describe('2026-07-28 over stdio', () => {
  it('server/discover: the revision, the capabilities with the tasks extension, resultType and the serverInfo stamp', async () => {
    const s = server(['--threads', '1']);
    s.send(modernRequest(1, 'server/discover'));
    const r = resultOf(await s.answer(1, STARTUP_MS));
    expect(r.supportedVersions).toEqual([MODERN]);
    expect(r.capabilities).toMatchObject({ tools: {}, resources: {}, extensions: { [TASKS]: {} } });
    expect(r.resultType).toBe('complete');
    expect((r._meta as Record<string, unknown>)[SERVER_INFO]).toMatchObject({ name: 'mcp-cancel-pool' });
  });

  it('an unsupported revision gets -32022 with data.supported, on the opening request and on any later one', async () => {
    const s = server(['--threads', '1']);
    s.send(modernRequest('first', 'tools/list', {}, { version: '2099-01-01' }));
    const first = await s.answer('first', STARTUP_MS);
    expect(first.error).toMatchObject({ code: -32022, data: { supported: [MODERN] } });
    s.send(modernRequest('ok', 'tools/list'));
    expect(resultOf(await s.answer('ok')).tools).toBeInstanceOf(Array);
    s.send(modernRequest('later', 'tools/call', { name: 'spin', arguments: { ms: 1 } }, { version: '2030-07-28' }));
    expect((await s.answer('later')).error).toMatchObject({ code: -32022, data: { supported: [MODERN] } });
    expect((await statsOf(s, 'st')).inFlight).toBe(0); // the refused call reserved nothing
  });

  it('every result carries resultType and serverInfo; ping and logging/setLevel do not exist in this era', async () => {
    const s = server(['--threads', '1']);
    s.send(modernRequest('list', 'tools/list'));
    s.send(modernRequest('call', 'tools/call', { name: 'spin', arguments: { ms: 1 } }));
    s.send(modernRequest('read', 'resources/read', { uri: 'executor://stats' }));
    s.send(modernRequest('resources', 'resources/list'));
    for (const id of ['list', 'call', 'read', 'resources']) {
      const r = resultOf(await s.answer(id, STARTUP_MS));
      expect(r.resultType, id).toBe('complete');
      expect((r._meta as Record<string, unknown>)[SERVER_INFO], id).toMatchObject({ name: 'mcp-cancel-pool' });
    }
    s.send(modernRequest('ping', 'ping'));
    s.send(modernRequest('level', 'logging/setLevel', { level: 'debug' }));
    expect((await s.answer('ping')).error).toMatchObject({ code: -32601 });
    expect((await s.answer('level')).error).toMatchObject({ code: -32601 });
  });

  it('logging per request: with _meta logLevel the call gets its notifications/message at that level and above; without it, none', async () => {
    const s = server(['--threads', '1', '--tools', REPORT_TOOLS]);
    const levels = ['debug', 'info', 'warning', 'error'];
    s.send(modernRequest('quiet', 'tools/call', { name: 'log_levels', arguments: { levels } }));
    await s.answer('quiet', STARTUP_MS);
    const from = s.lines.length;
    s.send(modernRequest('loud', 'tools/call', { name: 'log_levels', arguments: { levels } }, { logLevel: 'warning' }));
    await s.answer('loud');
    await sleep(100);
    const logs = s.lines.filter((m) => m.method === 'notifications/message');
    expect(logs.map((m) => (m.params as { level: string }).level)).toEqual(['warning', 'error']);
    expect(s.lines.indexOf(logs[0]!)).toBeGreaterThanOrEqual(from); // none belonged to the quiet call
  });

  it('a 2.x SDK client in modern mode: cancel stops the work, the slot is reused, hardKilled 0, nothing more is sent for the request', async () => {
    const m = await modernStdio([
      '--threads',
      '1',
      '--spare-threads',
      '0',
      '--grace-ms',
      '10000',
      '--tools',
      REPORT_TOOLS,
    ]);
    open.push(m);
    const received: Wire[] = [];
    const onmessage = m.transport.onmessage!;
    m.transport.onmessage = (message) => {
      received.push(message);
      onmessage(message);
    };
    const controller = new AbortController();
    let progress = 0;
    const call = m.client.callTool(
      { name: 'log_until_cancelled', arguments: { ms: 20_000, everyMs: 2 } },
      {
        signal: controller.signal,
        onprogress: () => progress++,
      },
    );
    await until(() => progress > 0, 30_000, 'the first progress report'); // a bound on a hang, loose for a busy machine
    controller.abort('user stopped it');
    await expect(call).rejects.toThrow();
    const started = performance.now();
    const next = await m.client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(next.isError).toBeFalsy();
    expect(performance.now() - started).toBeLessThan(15_000); // one thread: the cancelled call had 20 s left, so any answer sooner means it stopped
    const idOfCall = received.find((x) => x.method === 'notifications/progress')?.params as { progressToken: unknown };
    const seen = received.length;
    await sleep(300);
    const late = received
      .slice(seen)
      .filter(
        (x) =>
          (x.params as { progressToken?: unknown } | undefined)?.progressToken === idOfCall.progressToken ||
          x.method === 'notifications/message',
      );
    expect(late).toEqual([]);
    expect(await modernStats(m.client)).toMatchObject({
      cancelled: 1,
      completed: 1,
      hardKilled: 0,
      running: 0,
      inFlight: 0,
    });
  });

  it('storm: 2,000 randomized complete-vs-cancel races; each call ends exactly one way and the counters add up', async () => {
    const s = server(['--threads', '2', '--queue-limit', '5000']);
    const n = 2000;
    let seed = 0x2026;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const cancelled = new Set<number>();
    for (let i = 0; i < n; i++) {
      s.send(
        modernRequest(i, 'tools/call', {
          name: 'spin',
          arguments: { ms: Math.floor(random() * 4), stageMs: 0.5 },
          _meta: { progressToken: `p${i}` },
        }),
      );
      if (random() < 0.75) {
        cancelled.add(i);
        const delay = Math.floor(random() * 12);
        setTimeout(
          () =>
            s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: i, reason: 'storm' } }),
          delay,
        );
      }
      if (i % 100 === 99) await sleep(5);
    }
    await sleep(200);
    const end = Date.now() + 60_000;
    let st = await statsOf(s, 'settled-0');
    for (let k = 1; st.inFlight !== 0 && Date.now() < end; k++) {
      await sleep(200);
      st = await statsOf(s, `settled-${k}`);
    }
    // Read after the final stats answer: stdout is one ordered stream, so every response written before it is in.
    const final = await statsOf(s, 'final');
    const counts = answerCounts(s.lines);
    let silent = 0;
    for (let i = 0; i < n; i++) {
      const c = counts.get(i) ?? 0;
      expect(c, `answers to ${i}`).toBeLessThanOrEqual(1);
      if (c === 0) {
        silent++;
        expect(cancelled.has(i), `${i} was never cancelled yet got no answer`).toBe(true);
      } else {
        const answer = s.lines.find((m) => m.id === i && !('method' in m))!;
        expect(answer, `${i}`).toHaveProperty('result'); // a raced call is answered with its result, never an error
      }
    }
    expect(final.cancelled).toBe(silent);
    expect(final.completed + final.cancelled).toBe(n);
    expect(final.responsesDropped).toBe(0);
    expect(final.hardKilled).toBe(0);
    expect(silent).toBeGreaterThan(0);
    expect(silent).toBeLessThan(n);
    // Nothing at all for a cancelled call once its cancel won: no progress after its (absent) answer is possible to tell apart,
    // but no error and no result ever left for it.
    for (let i = 0; i < n; i++) if ((counts.get(i) ?? 0) === 0) expect(s.lines.some((m) => m.id === i)).toBe(false);
  }, 180_000);
});
