/**
 * Our client (`CancelAwareClient`, 2026 mode) on the multi-front-end task
 * question path: through nginx round robin to two `serve --redis` HTTP
 * front ends and a worker host, `callToolAsTask` on the eliciting tool run as
 * a task (--task-after-ms 0). The question the host asks is kept in Redis by
 * the front end that relayed it, shown by whichever front end a `tasks/get`
 * reaches, and answered by the client's own elicitation handler in one
 * `tasks/update`, wherever that lands; an abort while the question is
 * outstanding sends one `tasks/cancel` to some front end, which stops the
 * job on its host. nginx logs which front end served each request (tagged
 * with its JSON-RPC method by the client's fetch).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { StreamableHTTPClientTransport, type Task } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallAbortedError, CancelAwareClient, type ElicitationHandler } from '../dist/src/client/index.js';
import { Tap, type Msg } from './client-helpers.js';
import { startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { messagesIn } from './http-helpers.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { startNginx, type NginxProcess } from './nginx-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'task-input-client-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'f6'.repeat(32)}\n`, { mode: 0o600 });
const Q = 'task-input-client';
const TOOLS = ['--cluster-key-file', KEY, '--tools', MRTR_TOOLS];
const TEST_MS = 240_000;

let redis: RedisProcess;
let r: Redis;
let host: HostProcess;
let a: HttpServerProcess;
let b: HttpServerProcess;
let lb: NginxProcess;
let cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  const front = () =>
    startHttpServer([
      '--redis',
      redis.url,
      '--queue',
      Q,
      ...TOOLS,
      '--task-after-ms',
      '0',
      '--input-wait-ms',
      '600000',
    ]);
  [host, a, b] = await Promise.all([startHost(redis.url, Q, ['--threads', '2', ...TOOLS]), front(), front()]);
  lb = await startNginx({ a: a.url.host, b: b.url.host });
  for (const url of [a.url, b.url])
    await until(
      async () => (await stats(url)).queued !== undefined && (await spin(url)) === 'ok',
      30_000,
      'the front end on Redis',
    );
}, 120_000);
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  cleanup = [];
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all([a?.stop(), b?.stop(), host?.stop()]);
  r?.disconnect();
  await redis?.stop();
});

let n = 0;
/** One 2026 request POSTed straight to a front end (not through nginx), its answer. */
async function post(url: URL, method: string, params: Record<string, unknown>): Promise<Msg> {
  const body = modernRequest(`r${n++}`, method, params);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
    },
    body: JSON.stringify(body),
  });
  const answer = messagesIn(await res.text()).find((m) => m.id === body.id);
  if (!answer) throw new Error(`no answer to ${method} (HTTP ${res.status})`);
  return answer as Msg;
}
async function stats(url: URL): Promise<Record<string, number>> {
  const read = (await post(url, 'resources/read', { uri: 'executor://stats' })).result as {
    contents: { text: string }[];
  };
  return JSON.parse(read.contents[0]!.text) as Record<string, number>;
}
const spin = async (url: URL) =>
  ((await post(url, 'tools/call', { name: 'spin', arguments: { ms: 0 } })).result as { isError?: boolean }).isError ===
  true
    ? 'error'
    : 'ok';
const sum = async (name: string) => ((await stats(a.url))[name] ?? 0) + ((await stats(b.url))[name] ?? 0);
const hostStat = async (name: string) => (await host.stats(r))[name] ?? 0;

/** Tags each request with its JSON-RPC method(s), for nginx's route log. */
const tagged: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  if (typeof init?.body === 'string') {
    const parsed = JSON.parse(init.body) as { method?: string } | { method?: string }[];
    headers.set('x-test-rpc', (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m.method ?? 'response').join(','));
  }
  return fetch(input, { ...init, headers });
};

interface Session {
  readonly client: CancelAwareClient;
  readonly tap: Tap;
  readonly errors: Error[];
  /** nginx's route log before this session: its own requests are those after. */
  readonly from: number;
}

async function start(onElicit: ElicitationHandler): Promise<Session> {
  const from = lb.routes().length;
  const tap = new Tap(new StreamableHTTPClientTransport(lb.url, { fetch: tagged }));
  const client = new CancelAwareClient({ name: 'remote-task-input-client', version: '1.0.0' }).onElicitation(onElicit);
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(tap, { timeout: 120_000 });
  cleanup.push(() => client.close());
  expect(client.era).toBe('modern');
  return { client, tap, errors, from };
}

const sent = (s: Session, method: string): Msg[] => s.tap.sent.filter((m) => m.method === method);
/** The front ends (host:port) that served this session's requests of `method`, in order. */
const servedBy = (s: Session, method: string) =>
  lb
    .routes()
    .slice(s.from)
    .filter((x) => x.rpc === method)
    .map((x) => x.upstream);
const greet = { name: 'greet_user', arguments: { ms: 0 } };
const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe('callToolAsTask through nginx to two front ends and a worker host', () => {
  it(
    'the task asks, the handler answers once; tasks/get and tasks/update reach both front ends; the result arrives; each status reported once',
    async () => {
      const before = {
        updates: await sum('taskUpdates'),
        completed: await sum('tasksCompleted'),
        relayed: await hostStat('asksRelayed'),
      };
      const asked: string[] = [];
      const s = await start((params) => (asked.push(params.message), { action: 'accept', content: { name: 'Ada' } }));
      const statuses: Task['status'][] = [];
      const handle = await s.client.callToolAsTask(greet, { onstatus: (t) => statuses.push(t.status) });
      const result = await handle.result();
      expect(textOf(result)).toBe('hello, Ada; prepared 1 time(s) in this thread');
      expect(asked).toEqual(['What is your name?']);
      expect(sent(s, 'tasks/update')).toHaveLength(1);
      expect(sent(s, 'tasks/cancel')).toEqual([]);
      expect(statuses.filter((x) => x === 'input_required')).toEqual(['input_required']);
      expect(statuses.filter((x) => x === 'completed')).toEqual(['completed']);
      expect(statuses.at(-1)).toBe('completed');
      // Round robin: the task's requests were served by both front ends, not only the one that relayed the question.
      const fronts = [a.url.host, b.url.host];
      const served = [...servedBy(s, 'tools/call'), ...servedBy(s, 'tasks/get'), ...servedBy(s, 'tasks/update')];
      expect(new Set(served)).toEqual(new Set(fronts));
      const [relayer] = servedBy(s, 'tools/call'); // the front end that started the task relays the host's question
      expect(servedBy(s, 'tasks/get').some((u) => u !== relayer)).toBe(true); // another front end read it from Redis
      expect(servedBy(s, 'tasks/update')).toHaveLength(1);
      expect(fronts).toContain(servedBy(s, 'tasks/update')[0]);
      expect(await sum('taskUpdates')).toBe(before.updates + 1);
      await until(
        async () => (await sum('tasksCompleted')) === before.completed + 1,
        10_000,
        'the task counted completed',
      );
      expect(await hostStat('asksRelayed')).toBeGreaterThanOrEqual(before.relayed + 1);
      expect(s.client.stats()).toMatchObject({ taskUpdatesSent: 1, taskCancelsSent: 0, cancelsSent: 0, pending: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'aborted while the question is outstanding: one tasks/cancel reaches a front end, the task ends cancelled, the job stops on the host; the late answer is never sent',
    async () => {
      const before = { stopped: await hostStat('stopped'), cancelled: await sum('tasksCancelled') };
      let handlerAborted = false;
      let asked = 0;
      const s = await start((_params, { signal }) => {
        asked++;
        return new Promise((resolve) =>
          signal.addEventListener(
            'abort',
            () => {
              handlerAborted = true;
              resolve({ action: 'accept', content: { name: 'too late' } });
            },
            { once: true },
          ),
        );
      });
      const stop = new AbortController();
      const statuses: Task['status'][] = [];
      const handle = await s.client.callToolAsTask(greet, {
        signal: stop.signal,
        onstatus: (t) => statuses.push(t.status),
      });
      const result = handle.result().catch((e: unknown) => e);
      await until(() => asked === 1, 60_000, 'the handler to be asked');
      stop.abort('user closed the dialog');
      expect(await result).toBeInstanceOf(CallAbortedError);
      await until(() => handlerAborted, 10_000, 'the handler to see the abort');
      await until(
        async () => (await hostStat('stopped')) === before.stopped + 1,
        30_000,
        'the job stopped on the host',
      );
      expect(sent(s, 'tasks/cancel')).toHaveLength(1);
      expect(servedBy(s, 'tasks/cancel')).toHaveLength(1);
      expect([a.url.host, b.url.host]).toContain(servedBy(s, 'tasks/cancel')[0]);
      expect(sent(s, 'tasks/update')).toEqual([]);
      expect(asked).toBe(1);
      expect(handle.task.status).toBe('cancelled');
      expect((await handle.status()).status).toBe('cancelled'); // read through nginx: whichever front end, the same record
      expect(statuses.filter((x) => x === 'input_required')).toEqual(['input_required']);
      expect(statuses.filter((x) => x === 'cancelled')).toEqual(['cancelled']);
      await until(
        async () => (await sum('tasksCancelled')) === before.cancelled + 1,
        10_000,
        'the task counted cancelled',
      );
      expect(s.client.stats()).toMatchObject({ taskCancelsSent: 1, taskUpdatesSent: 0, cancelsSent: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );
});
