/**
 * Progress and logging over the real wire (stdio and Streamable HTTP): the
 * last report before a tool returns arrives before its response, a hot loop
 * of reports is throttled in the worker, logs follow logging/setLevel and stop
 * at cancellation, and the stats count a cancel the moment it wins.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LoggingMessageNotificationSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { sleep, stats, until } from './helpers.js';
import { connectWired, REPORT_TOOLS, type Msg, type TransportKind, type Wired } from './wire-clients.js';

const ALL_LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const INTERVAL_MS = 50; // ExecutorOptions.progressIntervalMs default

let open: Wired[] = [];
afterEach(async () => {
  await Promise.all(open.map((w) => w.close()));
  open = [];
});
async function connect(kind: TransportKind, args: string[] = []): Promise<Wired> {
  const w = await connectWired(kind, ['--threads', '1', '--tools', REPORT_TOOLS, ...args]);
  open.push(w);
  return w;
}

const isResponseTo = (id: unknown) => (m: Msg) => m.method === undefined && m.id === id;
const callIds = (w: Wired, tool: string) =>
  w.sent.filter((m) => m.method === 'tools/call' && m.params?.name === tool).map((m) => m.id);
const logsIn = (msgs: Msg[]) => msgs.filter((m) => m.method === 'notifications/message');

describe.each<TransportKind>(['stdio', 'http'])('reports over %s', (kind) => {
  it('the final progress report of a tool that returns at once arrives before its response, every time', async () => {
    const w = await connect(kind);
    const runs = 30;
    for (let i = 0; i < runs; i++) {
      await w.client.callTool({ name: 'final_progress', arguments: {} }, undefined, { onprogress: () => undefined });
    }
    const ids = callIds(w, 'final_progress');
    expect(ids).toHaveLength(runs);
    const missing = ids.filter((id) => {
      const answer = w.received.findIndex(isResponseTo(id));
      const final = w.received.findIndex(
        (m) =>
          m.method === 'notifications/progress' &&
          m.params?.progressToken === id &&
          m.params?.progress === 100 &&
          m.params?.total === 100,
      );
      return final < 0 || final > answer;
    });
    expect(missing, `calls whose final progress did not precede the response (of ${runs})`).toEqual([]);
    const s = await stats(w.client);
    expect(s.progressDropped).toBe(0);
    expect(s.reportsDiscarded).toBe(0);
  });

  it('a hot loop of ctx.progress is throttled in the worker; pings keep being answered', async () => {
    const w = await connect(kind);
    const before = await stats(w.client);
    const calls = 3_000_000;
    let done = false;
    const call = w.client
      .callTool({ name: 'progress_flood', arguments: { calls } }, undefined, {
        timeout: 120_000,
        onprogress: () => undefined,
      })
      .finally(() => (done = true));
    let pings = 0;
    let pingsSent = 0;
    while (!done) {
      pingsSent++;
      await w.client.ping();
      pings++;
    }
    const result = (await call) as { content: { text: string }[] };
    const { loopMs } = JSON.parse(result.content[0]!.text) as { loopMs: number };
    const after = await stats(w.client);
    // Read off the wire: the SDK client itself drops a notification it reads in the same chunk as the response (typescript-sdk#2580).
    const [id] = callIds(w, 'progress_flood');
    const answer = w.received.findIndex(isResponseTo(id));
    const progress = w.received.filter(
      (m, i) =>
        m.method === 'notifications/progress' &&
        m.params?.progressToken === id &&
        (i < answer || expect.fail('progress after the response')),
    );
    const notified = progress.length;
    const last = progress.at(-1)?.params;
    // One report per interval of the loop at most, plus the first and the final one.
    const bound = Math.floor(loopMs / INTERVAL_MS) + 2;
    expect(
      after.reportsReceived - before.reportsReceived,
      `reports that crossed to the main thread in a ${loopMs.toFixed(0)} ms loop`,
    ).toBeLessThanOrEqual(bound);
    expect(notified).toBeLessThanOrEqual(bound);
    expect(last).toEqual({ progressToken: id, progress: calls, total: calls });
    expect(pings).toBe(pingsSent);
    expect(pings).toBeGreaterThanOrEqual(1);
  });

  it("logging/setLevel filters a tool's logs; they arrive before its response with level, logger and data", async () => {
    const w = await connect(kind);
    await w.client.setLoggingLevel('warning');
    await w.client.callTool({ name: 'log_levels', arguments: { levels: ALL_LEVELS, withData: true } });
    const [first] = callIds(w, 'log_levels');
    const answer = w.received.findIndex(isResponseTo(first));
    const logs = logsIn(w.received.slice(0, answer));
    expect(logs.map((m) => m.params)).toEqual(
      ALL_LEVELS.map((level, i) => ({
        level,
        logger: 'log_levels',
        data: { message: `message ${i}`, data: { i, level } },
      })).slice(3),
    );
    for (const m of logs) expect(LoggingMessageNotificationSchema.safeParse(m).success).toBe(true);

    await w.client.setLoggingLevel('debug');
    await w.client.callTool({ name: 'log_levels', arguments: { levels: ['debug', 'info'] } });
    const second = callIds(w, 'log_levels')[1];
    const tail = w.received.slice(answer + 1, w.received.findIndex(isResponseTo(second)));
    expect(logsIn(tail).map((m) => m.params)).toEqual([
      { level: 'debug', logger: 'log_levels', data: 'message 0' },
      { level: 'info', logger: 'log_levels', data: 'message 1' },
    ]);
    expect(logsIn(w.received.slice(w.received.findIndex(isResponseTo(second))))).toEqual([]);
  });

  it('without logging/setLevel every level is sent, still before the response', async () => {
    const w = await connect(kind);
    await w.client.callTool({ name: 'log_levels', arguments: { levels: ALL_LEVELS } });
    const answer = w.received.findIndex(isResponseTo(callIds(w, 'log_levels')[0]));
    expect(logsIn(w.received.slice(0, answer)).map((m) => (m.params as { level: string }).level)).toEqual(ALL_LEVELS);
    expect(logsIn(w.received.slice(answer))).toEqual([]);
  });

  it('a log flood is bounded by the per-call budget, counted in logsDropped, and errors keep their own budget', async () => {
    const w = await connect(kind);
    await w.client.setLoggingLevel('debug');
    const count = 200_000;
    await w.client.callTool({ name: 'log_flood', arguments: { count, level: 'debug' } });
    const debugs = logsIn(w.received).length;
    await w.client.callTool({ name: 'log_flood', arguments: { count: 10, level: 'error' } });
    const errors = logsIn(w.received).length - debugs;
    const s = await stats(w.client);
    expect(debugs).toBeGreaterThanOrEqual(50); // the burst
    expect(debugs).toBeLessThan(count / 100);
    expect(s.logsDropped).toBe(count - debugs);
    expect(errors).toBe(10);
  });

  it('no log or progress for a call once its cancellation won', async () => {
    const w = await connect(kind);
    await w.client.setLoggingLevel('info');
    const controller = new AbortController();
    const call = w.client.callTool({ name: 'log_until_cancelled', arguments: { ms: 30_000, everyMs: 2 } }, undefined, {
      signal: controller.signal,
      onprogress: () => undefined,
    });
    call.catch(() => undefined);
    await until(() => logsIn(w.received).length >= 3, 10_000, 'three logs');
    const [id] = callIds(w, 'log_until_cancelled');
    await w.client.notification({ method: 'notifications/cancelled', params: { requestId: id!, reason: 'test' } });
    // Over stdio the server read the cancel before this ping; anything it sent for the call after it is a violation.
    await w.client.ping();
    const afterPing = w.received.length;
    await sleep(300);
    const late = w.received
      .slice(afterPing)
      .filter((m) => m.method === 'notifications/message' || m.method === 'notifications/progress' || m.id === id);
    expect(late).toEqual([]);
    const s = await stats(w.client);
    expect(s.cancelled).toBe(1);
    controller.abort();
  });

  it('executor://stats counts a cancel of a running call at once, before its worker returns', async () => {
    const w = await connect(kind, ['--grace-ms', '60000']);
    const controller = new AbortController();
    let progressed = 0;
    // No checkpoints: the worker cannot see the cancel and returns only when its 15 s are up, so the stats
    // read below lands before it returns however the machine is loaded. (A cooperative spin's next
    // checkpoint, right after the progress we wait for, sees the cancel at once if its thread was starved.)
    // One 15 s slice of wall-clock time: 1 ms slices would add up the thread's CPU share, and a starved
    // thread then ran past the 60 s grace (a loaded run: hardKilled 1).
    const call = w.client.callTool(
      { name: 'spin', arguments: { ms: 15_000, stageMs: 15_000, cooperative: false } },
      undefined,
      {
        signal: controller.signal,
        onprogress: () => progressed++,
        timeout: 120_000,
      },
    );
    call.catch(() => undefined);
    await until(() => progressed > 0, 30_000, 'the uncheckable part to begin');
    const [id] = callIds(w, 'spin');
    await w.client.notification({ method: 'notifications/cancelled', params: { requestId: id!, reason: 'test' } });
    const s = await stats(w.client);
    expect(s).toMatchObject({ cancelled: 1, running: 0, stopping: 1, completed: 0 });
    await until(async () => (await stats(w.client)).stopping === 0, 60_000, 'the worker to return');
    expect(await stats(w.client)).toMatchObject({ cancelled: 1, running: 0, stopping: 0, hardKilled: 0 });
    controller.abort();
  }, 150_000);
});
