/**
 * examples/embed/server.mjs (an SDK 2.x `McpServer` with two light tools of
 * its own and the pooled tools of heavy-tools.mjs) run as a real subprocess,
 * with real SDK clients of both lines, in both eras, over stdio and HTTP:
 * every combination runs the same cases. Each case asserts what the server
 * decided (the wire, in order; the stats), never how long it took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMBOS,
  connect,
  label,
  messagesFor,
  sentCall,
  startHttpExample,
  type Combo,
  type Conn,
  type HttpExample,
} from './embed-clients.js';
import { until } from './helpers.js';

/** One thread (so a second call queues), one queued call at most, a short grace before the hard stop. */
const ARGS = ['--threads', '1', '--queue-limit', '1', '--grace-ms', '300'];
const LONG = { ms: 60_000, stageMs: 5 };
const SLOW = 120_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe.each(COMBOS.map((c) => [label(c), c] as const))(
  'examples/embed/server.mjs: %s',
  (_name: string, combo: Combo) => {
    let http: HttpExample | undefined;
    let conn: Conn;

    beforeAll(async () => {
      if (combo.transport === 'http') http = await startHttpExample(ARGS);
      conn = await connect(combo, ARGS, http);
    }, SLOW);

    afterAll(async () => {
      await conn?.close();
      await http?.stop();
    });

    /** Waits until nothing is in flight (the stopped job's worker has returned too). */
    const idle = () =>
      until(
        async () => {
          const s = await conn.stats();
          return s.inFlight === 0 && s.running === 0 && s.stopping === 0 && s.queued === 0;
        },
        20_000,
        'an idle pool',
      );

    it(
      'lists its own tools beside the pooled ones, and speaks the era asked for',
      async () => {
        const echo = await conn.call('echo', { text: 'hi' });
        expect(echo.content).toEqual([{ type: 'text', text: 'hi' }]);
        const time = await conn.call('server_time', {});
        expect((time.content[0] as { text: string }).text).toMatch(/^\d{4}-\d\d-\d\dT/);
        const spun = await conn.call('spin', { ms: 1 });
        expect(spun.isError).toBeFalsy();
        expect(spun.structuredContent).toMatchObject({ slices: 1 });
        const meta = conn.sent.find((m) => m.method === 'tools/call')?.params?._meta as
          Record<string, unknown> | undefined;
        expect(meta?.['io.modelcontextprotocol/protocolVersion']).toBe(combo.era === '2026' ? '2026-07-28' : undefined);
      },
      SLOW,
    );

    it(
      'a cancel while running: progress before it, then nothing at all for that call; the work stops and the queued call gets the slot',
      async () => {
        await idle();
        const base = await conn.stats();
        const stop = new AbortController();
        let progress = 0;
        const a = conn.call('spin', LONG, { signal: stop.signal, onprogress: () => progress++ }).then(
          () => 'answered',
          () => 'rejected',
        );
        await until(() => progress > 0, 20_000, 'progress from the long call');
        const b = conn.call('spin', { ms: 1 });
        await until(async () => (await conn.stats()).queued === 1, 20_000, 'the second call queued behind the first');
        stop.abort('user pressed stop');
        expect(await a).toBe('rejected'); // the client gave up on it
        // One thread, and the first call had a minute to go: the second completing means the slot was handed on.
        expect((await b).isError).toBeFalsy();
        await idle();
        const after = await conn.stats();
        expect(after.cancelled - base.cancelled).toBe(1);
        expect(after.completed - base.completed).toBe(1);
        expect(after.hardKilled - base.hardKilled).toBe(0); // stopped at a checkpoint
        // The server had decided the cancel several round trips before this stats read was answered.
        const mark = conn.received.length;
        await sleep(300);
        const { id, token } = sentCall(conn, (args) => args.ms === LONG.ms && args.cooperative === undefined);
        const seen = messagesFor(conn, id, token);
        expect(seen.responses).toEqual([]); // no result, no error
        expect(seen.progress.length).toBeGreaterThan(0);
        expect(seen.progress.every((i) => i < mark)).toBe(true);
      },
      SLOW,
    );

    it(
      'a cancel that stage ignores: the thread is hard-stopped after the grace, the slot passes on at once, nothing is sent for the call',
      async () => {
        await idle();
        const base = await conn.stats();
        const stop = new AbortController();
        let started = false;
        const a = conn
          .call('spin', { ms: 60_000, cooperative: false }, { signal: stop.signal, onprogress: () => (started = true) })
          .catch(() => 'rejected');
        await until(() => started, 20_000, 'the uncheckable stage to start');
        const b = conn.call('spin', { ms: 1 });
        await until(async () => (await conn.stats()).queued === 1, 20_000, 'the second call queued');
        stop.abort('stop');
        await a;
        expect((await b).isError).toBeFalsy();
        await until(async () => (await conn.stats()).hardKilled - base.hardKilled === 1, 20_000, 'the hard stop');
        await idle();
        const { id, token } = sentCall(conn, (args) => args.cooperative === false);
        expect(messagesFor(conn, id, token).responses).toEqual([]);
      },
      SLOW,
    );

    it(
      'a full queue gets the same JSON-RPC error as serve (-32000, "server busy")',
      async () => {
        await idle();
        const stopA = new AbortController();
        const stopB = new AbortController();
        let progress = 0;
        const a = conn
          .call('spin', LONG, { signal: stopA.signal, onprogress: () => progress++ })
          .catch(() => 'rejected');
        await until(() => progress > 0, 20_000, 'the first call running');
        const b = conn.call('spin', LONG, { signal: stopB.signal }).catch(() => 'rejected');
        await until(async () => (await conn.stats()).queued === 1, 20_000, 'the second call queued');
        const refused = (await conn.call('spin', { ms: 1 }).catch((e: unknown) => e)) as {
          code?: number;
          message?: string;
        };
        expect(refused.code).toBe(-32000);
        expect(refused.message).toMatch(
          /server busy: total queue limit reached: 1 calls already waiting \(--queue-limit 1\); try again later/,
        );
        stopB.abort('done');
        stopA.abort('done');
        await Promise.all([a, b]);
        await idle();
      },
      SLOW,
    );
  },
);

describe.each(COMBOS.filter((c) => c.transport === 'stdio').map((c) => [label(c), c] as const))(
  'examples/embed/server.mjs: %s, the cancel right behind the call',
  (_name: string, combo: Combo) => {
    let conn: Conn;
    beforeAll(async () => {
      conn = await connect(combo, ARGS);
    }, SLOW);
    afterAll(() => conn?.close());

    const idle = () => until(async () => (await conn.stats()).inFlight === 0, 20_000, 'nothing in flight');

    it(
      'a cancel in the same write as its call: no job starts',
      async () => {
        await idle();
        const base = await conn.stats();
        const stop = new AbortController();
        // The call and its cancel leave in one write to the server's stdin.
        conn.stdin!.cork();
        const a = conn
          .call('spin', { ms: 5_000 }, { signal: stop.signal, onprogress: () => undefined })
          .catch(() => 'rejected');
        await new Promise<void>((r) => setImmediate(r));
        stop.abort('changed my mind');
        await new Promise<void>((r) => setImmediate(r));
        conn.stdin!.uncork();
        await a;
        await idle();
        const after = await conn.stats();
        expect(after.cancelled - base.cancelled).toBe(1);
        expect(after.completed - base.completed).toBe(0);
        // No stage ran: a running spin reports after every slice, and nothing reached the main thread.
        expect(after.reportsReceived - base.reportsReceived).toBe(0);
        const { id, token } = sentCall(conn, (args) => args.ms === 5_000);
        expect(messagesFor(conn, id, token)).toEqual({ responses: [], progress: [] });
      },
      SLOW,
    );
  },
);

describe('examples/embed/server.mjs over HTTP, 2026: two clients sending the same request id', () => {
  let http: HttpExample;
  beforeAll(async () => {
    http = await startHttpExample(ARGS);
  }, SLOW);
  afterAll(() => http?.stop());

  it(
    'both complete; cancelling one leaves the other running to its end',
    async () => {
      const combo: Combo = { transport: 'http', era: '2026', line: '2.x' };
      const one = await connect(combo, ARGS, http);
      const two = await connect(combo, ARGS, http);
      try {
        const [r1, r2] = await Promise.all([one.call('spin', { ms: 30 }), two.call('spin', { ms: 30 })]);
        expect([r1.isError, r2.isError]).toEqual([undefined, undefined]);
        expect(sentCall(one, (a) => a.ms === 30).id).toBe(sentCall(two, (a) => a.ms === 30).id);
        const [base] = await Promise.all([one.stats(), two.stats()]);
        // The next call of each client carries the same id again.
        const stop = new AbortController();
        let progress = 0;
        const cancelled = one
          .call('spin', LONG, { signal: stop.signal, onprogress: () => progress++ })
          .catch(() => 'rejected');
        const kept = two.call('spin', { ms: 300 });
        await until(() => progress > 0, 20_000, 'progress from the first client');
        expect(sentCall(one, (a) => a.ms === LONG.ms).id).toBe(sentCall(two, (a) => a.ms === 300).id);
        stop.abort('only mine');
        expect(await cancelled).toBe('rejected');
        const result = await kept;
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ slices: 60 });
        await until(async () => (await two.stats()).inFlight === 0, 20_000, 'nothing in flight');
        const after = await two.stats();
        expect(after.cancelled - base.cancelled).toBe(1);
        expect(after.completed - base.completed).toBe(1);
      } finally {
        await one.close();
        await two.close();
      }
    },
    SLOW,
  );
});
