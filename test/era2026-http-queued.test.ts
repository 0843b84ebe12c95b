/**
 * 2026-07-28 over Streamable HTTP: a call still waiting in the queue (the
 * one thread busy) whose response stream the client closes. The close is its
 * cancel: nothing is sent for it, it never reaches a thread, and the counters
 * say it was cancelled while queued. The server is a subprocess on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startHttpServer, type HttpServerProcess } from './helpers.js';
import { messagesIn, sseMessages } from './http-helpers.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';

let server: HttpServerProcess;
beforeAll(async () => {
  server = await startHttpServer(['--threads', '1', '--spare-threads', '0']);
});
afterAll(async () => {
  await server.stop();
});

type Body = ReturnType<typeof modernRequest>;
type Stats = Record<
  | 'completed'
  | 'cancelled'
  | 'queued'
  | 'stopping'
  | 'inFlight'
  | 'running'
  | 'hardKilled'
  | 'responsesDropped'
  | 'progressDropped'
  | 'lateCancelsIgnored',
  number
>;
function post(body: Body, signal?: AbortSignal): Promise<Response> {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
}
let n = 0;
async function stats(): Promise<Stats> {
  const body = modernRequest(`stats-${n++}`, 'resources/read', { uri: 'executor://stats' });
  const m = messagesIn(await (await post(body)).text()).find((x) => x.id === body.id)!;
  return JSON.parse((m.result as { contents: { text: string }[] }).contents[0]!.text) as Stats;
}
async function until(check: (s: Stats) => boolean, what: string): Promise<Stats> {
  const end = Date.now() + 30_000;
  for (;;) {
    const s = await stats();
    if (check(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await sleep(20);
  }
}
/** A counter or histogram count in /metrics, summed over its labels (0 if absent). */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', server.url))).text();
  const lines = text.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('2026-07-28 HTTP: a queued call cancelled by closing its stream', () => {
  it('nothing is sent for it, it never runs, and the counters say cancelled while queued', async () => {
    const before = await stats();
    const ranBefore = await metric('mcp_cancel_pool_queue_wait_seconds_count');
    const cancelsBefore = await metric('mcp_cancel_pool_cancels_total');
    // The one thread, busy: its first progress says it runs.
    const busyBody = modernRequest('busy', 'tools/call', {
      name: 'spin',
      arguments: { ms: 2500 },
      _meta: { progressToken: 'busy' },
    });
    const busy = sseMessages(await post(busyBody));
    const end = Date.now() + 30_000;
    while (busy.messages.length === 0 && Date.now() < end) await sleep(10);
    expect(busy.messages[0]?.method).toBe('notifications/progress');
    // Behind it, in the queue.
    const controller = new AbortController();
    const queuedBody = modernRequest('queued', 'tools/call', {
      name: 'spin',
      arguments: { ms: 1000 },
      _meta: { progressToken: 'queued' },
    });
    const queued = post(queuedBody, controller.signal).then(
      async (r) => {
        const seen = sseMessages(r);
        await seen.ended.catch(() => undefined);
        return seen.messages;
      },
      () => [], // closed before the response headers came: nothing was sent either
    );
    await until((s) => s.queued === 1, 'the call to wait in the queue');
    controller.abort(); // the close is the cancel
    const stopped = await until((s) => s.cancelled === before.cancelled + 1, 'the cancel to be decided');
    expect(stopped).toMatchObject({ queued: 0, stopping: 0 }); // decided in the queue: no thread had it
    // The busy call is answered in full; the cancelled one got nothing at all.
    await busy.ended;
    expect(busy.messages.find((m) => m.id === 'busy')).toMatchObject({ result: { resultType: 'complete' } });
    expect(await queued).toEqual([]);
    const after = await until((s) => s.inFlight === 0 && s.running === 0, 'the server to settle');
    expect(after.completed - before.completed).toBe(1);
    expect(after.cancelled - before.cancelled).toBe(1);
    expect(after).toMatchObject({
      hardKilled: 0,
      responsesDropped: before.responsesDropped,
      progressDropped: before.progressDropped,
      lateCancelsIgnored: before.lateCancelsIgnored,
    });
    // It never ran: only the busy call ever reached a thread (a job is timed in the queue when a thread takes it); one cancel won.
    expect((await metric('mcp_cancel_pool_queue_wait_seconds_count')) - ranBefore).toBe(1);
    expect((await metric('mcp_cancel_pool_cancels_total')) - cancelsBefore).toBe(1);
    // The thread is free for the next call.
    const next = modernRequest('next', 'tools/call', { name: 'spin', arguments: { ms: 1 } });
    expect(messagesIn(await (await post(next)).text()).find((m) => m.id === 'next')).toMatchObject({
      result: { resultType: 'complete' },
    });
  });
});
