/**
 * Issue 64: limits per caller first, then in total, each refusal naming its
 * limit; and `executor://stats` showing a caller its own counts beside the
 * totals, every caller's only to an operator's token (--auth-operator-scope).
 * Real tokens from oidc-provider, the server as a subprocess, raw HTTP.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSession, openSession, postAs, startAuthServer, type Answer, type AuthServer } from './auth-helpers.js';
import { until } from './helpers.js';
import { listening, MCP_HEADERS } from './http-helpers.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { ADMIN_SCOPE, MCP_SCOPE, startIssuer, type TestIssuer } from './oidc-helpers.js';

const FAILING_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/failing-tools.js', import.meta.url));

interface CallerEntry {
  id: string;
  queued: number;
  tasksWorking?: number;
  sessions: number;
}
type Stats = Record<string, number> & { caller?: CallerEntry; callers?: CallerEntry[] };

let idp: TestIssuer;
beforeAll(async () => {
  idp = await startIssuer();
});
afterAll(async () => {
  await idp?.stop();
});

const error = (a: Answer) => a.messages[0]?.error;
const result = (a: Answer) => a.messages[0]?.result as Record<string, unknown>;
let seq = 0;

/** `executor://stats` as `token`'s caller reads it (2026). */
async function statsOf(server: { url: URL }, token: string | undefined): Promise<Stats> {
  const a = await postAs(server.url, token, modernRequest(`s${++seq}`, 'resources/read', { uri: 'executor://stats' }));
  return JSON.parse((result(a).contents as { text: string }[])[0]!.text) as Stats;
}

/** A 2026 call whose response stream stays open until `stop` (closing it cancels the call). */
function heldCall(server: { url: URL }, token: string | undefined, name: string, args: Record<string, unknown>) {
  const body = modernRequest(`h${++seq}`, 'tools/call', { name, arguments: args });
  const abort = new AbortController();
  const answered = fetch(server.url, {
    method: 'POST',
    headers: {
      ...MCP_HEADERS,
      ...modernHeaders(body),
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
    signal: abort.signal,
  }).then(
    (r) => r.text(),
    () => 'aborted',
  );
  return { answered, stop: () => abort.abort() };
}

describe('the queue: a caller’s share first, then the total', () => {
  let server: AuthServer;
  beforeAll(async () => {
    server = await startAuthServer(idp.issuer, [
      '--tools',
      FAILING_TOOLS,
      '--queue-limit',
      '3',
      '--queue-limit-per-caller',
      '2',
    ]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('alice past her share gets "per-caller queue share"; bob still queues; past the total, anyone gets "total queue limit"', async () => {
    const [alice, bob, carol] = await Promise.all([
      idp.token('alice', server.url.href),
      idp.token('bob', server.url.href),
      idp.token('limited', server.url.href),
    ]);
    const sleep = { ms: 120_000 };
    const held = [heldCall(server, alice, 'sleep', sleep)];
    try {
      await until(async () => (await statsOf(server, alice)).running === 1, 30_000, "alice's first call running");
      held.push(heldCall(server, alice, 'sleep', sleep), heldCall(server, alice, 'sleep', sleep));
      let last: Stats | undefined;
      await until(
        async () => (last = await statsOf(server, alice)).caller?.queued === 2,
        30_000,
        "alice's two calls queued",
      ).catch((e: Error) => {
        throw new Error(`${e.message}: ${JSON.stringify(last)}`);
      });

      const past = await postAs(
        server.url,
        alice,
        modernRequest('a-past', 'tools/call', { name: 'sleep', arguments: sleep }),
      );
      expect(error(past)).toMatchObject({ code: -32000 });
      expect(error(past)!.message).toMatch(/per-caller queue share reached: this caller has 2 calls waiting/);
      expect(error(past)!.message).toContain('--queue-limit-per-caller 2');

      // Bob's share is his own: his call queues (three waiting now: the total).
      held.push(heldCall(server, bob, 'sleep', sleep));
      await until(async () => (await statsOf(server, bob)).caller?.queued === 1, 30_000, "bob's call queued");
      const full = await postAs(
        server.url,
        carol,
        modernRequest('c-full', 'tools/call', { name: 'sleep', arguments: sleep }),
      );
      expect(error(full)).toMatchObject({ code: -32000 });
      expect(error(full)!.message).toMatch(/total queue limit reached: 3 calls already waiting/);
      expect(error(full)!.message).toContain('--queue-limit 3');

      // Each sees its own queued count beside the totals, and nobody else's.
      const [hers, his] = [await statsOf(server, alice), await statsOf(server, bob)];
      expect(hers).toMatchObject({ queued: 3, running: 1, caller: { queued: 2, sessions: 0 } });
      expect(his).toMatchObject({ queued: 3, caller: { queued: 1, sessions: 0 } });
      expect(hers.caller!.id).not.toBe(his.caller!.id);
      expect(hers).not.toHaveProperty('callers');
      expect(his).not.toHaveProperty('callers');
    } finally {
      for (const h of held) h.stop();
      await Promise.all(held.map((h) => h.answered));
    }
    // Closing the streams cancelled every held call: nothing is left waiting or running.
    await until(
      async () => {
        const s = await statsOf(server, alice);
        return s.queued === 0 && s.running === 0;
      },
      30_000,
      'the held calls cancelled',
    );
  });
});

/**
 * A gzip POST whose body never ends: 4 KB more every 250 ms, 16× the minimum body rate (5 KB in 5 s), so even a
 * test process stalled for seconds on a busy machine keeps it above the rate and it holds a decode slot. What the
 * server answers it, if anything, is kept for the failure message.
 */
function drippedGzip(server: AuthServer, token: string): { socket: Socket; stop: () => void; answer: () => string } {
  const socket = connect(Number(server.url.port), '127.0.0.1');
  socket.on('error', () => undefined);
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString('latin1').slice(0, 200)));
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${server.url.port}\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\nauthorization: Bearer ${token}\r\n` +
      `content-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n`,
  );
  const gz = createGzip();
  gz.on('data', (c: Buffer) => socket.write(`${c.length.toString(16)}\r\n${c.toString('latin1')}\r\n`, 'latin1'));
  const drip = () => {
    gz.write(randomBytes(4096));
    gz.flush();
  };
  drip();
  const timer = setInterval(drip, 250);
  return {
    socket,
    answer: () => answer,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** A whole gzip 2026 tools/list: its status and text. */
async function gzipList(server: AuthServer, token: string): Promise<{ status: number; text: string }> {
  const body = modernRequest(`g${++seq}`, 'tools/list');
  const r = await fetch(server.url, {
    method: 'POST',
    headers: {
      ...MCP_HEADERS,
      ...modernHeaders(body),
      authorization: `Bearer ${token}`,
      'content-encoding': 'gzip',
    },
    body: gzipSync(JSON.stringify(body)),
  });
  return { status: r.status, text: await r.text() };
}

describe('compressed bodies decoded at once: 4 per caller, then 8 in all', () => {
  let server: AuthServer;
  beforeAll(async () => {
    server = await startAuthServer(idp.issuer);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('alice holding 4 gets 503 naming her limit while bob decodes; with bob at 4 too, carol gets 503 naming the total', async () => {
    const [alice, bob, carol] = await Promise.all([
      idp.token('alice', server.url.href),
      idp.token('bob', server.url.href),
      idp.token('limited', server.url.href),
    ]);
    const drips = Array.from({ length: 4 }, () => drippedGzip(server, alice));
    try {
      let refused = { status: 0, text: '' };
      // Once her four bodies are being decoded (what the server decides; a probe that fits is answered and leaves).
      const why = () => `alice at her limit; the drips were answered ${JSON.stringify(drips.map((d) => d.answer()))}`;
      await until(async () => (refused = await gzipList(server, alice)).status === 503, 30_000, why());
      expect(refused.text).toContain('too many compressed bodies of this caller being decoded at once (4)');
      const his = await gzipList(server, bob);
      expect(his.status).toBe(200);
      expect(his.text).toContain('"tools"');

      drips.push(...Array.from({ length: 4 }, () => drippedGzip(server, bob)));
      await until(async () => (await gzipList(server, bob)).status === 503, 30_000, 'bob at his limit');
      const full = await gzipList(server, carol);
      expect(full.status).toBe(503);
      expect(full.text).toContain('too many compressed bodies being decoded at once (8)');
    } finally {
      for (const d of drips) d.stop();
    }
    // Their slots are free again once the drips are gone.
    await until(async () => (await gzipList(server, carol)).status === 200, 30_000, 'slots freed');
  });
});

describe('tasks: the per-caller task limit first, then the total; the stats each caller sees', () => {
  let server: AuthServer;
  beforeAll(async () => {
    server = await startAuthServer(idp.issuer, [
      '--max-working-tasks-per-session',
      '2',
      '--max-working-tasks',
      '3',
      '--auth-operator-scope',
      ADMIN_SCOPE,
    ]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const task = (token: string, id: string) =>
    postAs(
      server.url,
      token,
      modernRequest(id, 'tools/call', { name: 'task_spin', arguments: { ms: 120_000 } }, { tasks: true }),
    );

  it('names the limit that refused; a caller sees its own counts, an operator token every caller’s', async () => {
    const [alice, bob, operator] = await Promise.all([
      idp.token('alice', server.url.href, MCP_SCOPE),
      idp.token('bob', server.url.href, MCP_SCOPE),
      // Alice again (the same caller: iss, sub, client), with the operator scope.
      idp.token('alice', server.url.href, `${MCP_SCOPE} ${ADMIN_SCOPE}`),
    ]);
    const created: [string, string][] = [];
    try {
      for (const id of ['a1', 'a2']) {
        const r = result(await task(alice, id));
        expect(r, id).toMatchObject({ resultType: 'task', status: 'working' });
        created.push([alice, r.taskId as string]);
      }
      const third = error(await task(alice, 'a3'));
      expect(third).toMatchObject({ code: -32000 });
      expect(third!.message).toMatch(/^per-caller task limit reached: .* 2 working tasks/);

      const his = result(await task(bob, 'b1'));
      expect(his).toMatchObject({ resultType: 'task', status: 'working' });
      created.push([bob, his.taskId as string]);
      const total = error(await task(bob, 'b2'));
      expect(total).toMatchObject({ code: -32000 });
      expect(total!.message).toMatch(/^total task limit reached: 3 working tasks/);

      // Alice's 2025 session counts as alice: her limit, not the session's own (nor the total, also reached), refuses.
      const hersToo = await openSession(server.url, alice);
      const legacy = error(
        await inSession(server.url, alice, hersToo, {
          jsonrpc: '2.0',
          id: 'lt',
          method: 'tools/call',
          params: { name: 'task_spin', arguments: { ms: 1 }, task: {} },
        }),
      );
      expect(legacy).toMatchObject({ code: -32000 });
      expect(legacy!.message).toMatch(/^per-caller task limit reached/);

      const sid = await openSession(server.url, bob);
      const hers = await statsOf(server, alice);
      const bobs = JSON.parse(
        (
          result(
            await inSession(server.url, bob, sid, {
              jsonrpc: '2.0',
              id: 'r',
              method: 'resources/read',
              params: { uri: 'executor://stats' },
            }),
          ).contents as { text: string }[]
        )[0]!.text,
      ) as Stats;
      expect(hers).toMatchObject({ tasksWorking: 3, caller: { tasksWorking: 2, sessions: 1 } });
      expect(hers).not.toHaveProperty('callers');
      // Bob reads over his 2025 session: the same view of his own (one task, one session).
      expect(bobs).toMatchObject({ tasksWorking: 3, caller: { tasksWorking: 1, sessions: 1 } });
      expect(bobs).not.toHaveProperty('callers');

      const all = await statsOf(server, operator);
      expect(all.caller).toEqual(hers.caller);
      const byId = new Map(all.callers!.map((c) => [c.id, c]));
      expect(byId.get(hers.caller!.id)).toMatchObject({ tasksWorking: 2, sessions: 1 });
      expect(byId.get(bobs.caller!.id)).toMatchObject({ tasksWorking: 1, sessions: 1 });
      expect(all.callers).toHaveLength(2);
      // No subject, client id or token of anyone in what the operator reads: the callers' keys only.
      const text = JSON.stringify(all);
      for (const name of ['alice', 'bob', operator, alice, bob]) expect(text).not.toContain(name);
    } finally {
      for (const [token, taskId] of created)
        await postAs(server.url, token, modernRequest(`c-${taskId}`, 'tasks/cancel', { taskId }, { tasks: true }));
    }
  });
});

describe('without OAuth: every client is the one anonymous caller', () => {
  let server: Awaited<ReturnType<typeof listening>>;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--tools', FAILING_TOOLS, '--queue-limit', '2']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('its per-caller limits are the totals (no queue share of its own), and its counts are the totals', async () => {
    const sleep = { ms: 120_000 };
    const held = [heldCall(server, undefined, 'sleep', sleep)];
    try {
      await until(async () => (await statsOf(server, undefined)).running === 1, 30_000, 'the first call running');
      // Two waiting: the whole queue, past half of it (what a caller's share would be under OAuth).
      held.push(heldCall(server, undefined, 'sleep', sleep), heldCall(server, undefined, 'sleep', sleep));
      await until(async () => (await statsOf(server, undefined)).queued === 2, 30_000, 'two calls queued');
      const full = await postAs(
        server.url,
        undefined,
        modernRequest('full', 'tools/call', { name: 'sleep', arguments: sleep }),
      );
      expect(error(full)!.message).toMatch(/^server busy: total queue limit reached: 2 calls already waiting/);
      const sid = await openSession(server.url, undefined);
      const stats = await statsOf(server, undefined);
      expect(stats.caller).toEqual({ id: 'anonymous', queued: 2, tasksWorking: stats.tasksWorking, sessions: 1 });
      expect(stats).not.toHaveProperty('callers');
      expect(sid).toBeTruthy();
    } finally {
      for (const h of held) h.stop();
      await Promise.all(held.map((h) => h.answered));
    }
  });
});
