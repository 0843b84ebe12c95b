/**
 * 2026-07-28 tasks that ask the client (the tasks extension's
 * `input_required`), over the real wire with the server as a subprocess: raw
 * JSON-RPC lines over stdio, raw POSTs over Streamable HTTP on 127.0.0.1.
 * The eliciting fixture tool runs as a task (--task-after-ms 0); its
 * question shows in tasks/get as `inputRequests`, tasks/update answers it and
 * the same job runs on (its first stage ran once) to completion. A task
 * whose answer never comes is cancelled after --input-wait-ms through the
 * CAS; tasks/cancel while it waits is final at once; bad updates are refused.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LineServer, type Wire } from './line-client.js';
import { sleep, startHttpServer } from './helpers.js';
import { messagesIn } from './http-helpers.js';
import { modernHeaders, modernRequest, TASKS } from './modern-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
/** A busy machine may take this long to start a server with its pool, or to answer under load. */
const SLOW_MS = 60_000;
const BASE = ['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS, '--task-after-ms', '0'];
/** A 2026 client that declared the tasks extension and can answer an elicitation. */
const ASKING = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } } };

type Stats = Record<string, number>;
/** Sends one 2026 request and resolves with its answer. */
type Ask = (method: string, params: Record<string, unknown>) => Promise<Wire>;

let open: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});

let n = 0;
function stdio(args: string[] = []): { s: LineServer; ask: Ask } {
  const s = new LineServer([...BASE, ...args]);
  open.push({ close: () => s.kill() });
  return {
    s,
    ask: (method, params) => {
      const id = `r${n++}`;
      s.send(modernRequest(id, method, params, {}, ASKING));
      return s.answer(id, SLOW_MS);
    },
  };
}
async function http(args: string[] = []): Promise<{ ask: Ask }> {
  const srv = await startHttpServer([...BASE, ...args]);
  open.push({ close: () => srv.stop() });
  return {
    ask: async (method, params) => {
      const body = modernRequest(`h${n++}`, method, params, {}, ASKING);
      const res = await fetch(srv.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...modernHeaders(body),
        },
        body: JSON.stringify(body),
      });
      return messagesIn(await res.text()).find((m) => m.id === body.id) as Wire;
    },
  };
}

const result = (m: Wire) => m.result as Record<string, unknown>;
const accept = (name: string) => ({ action: 'accept', content: { name } });
const stats = async (ask: Ask): Promise<Stats> =>
  JSON.parse(
    (result(await ask('resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
  ) as Stats;
/** Polls until `check` holds (the server decides; this only waits for it). */
async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T> {
  const end = Date.now() + SLOW_MS;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`never saw ${what}: ${JSON.stringify(v)}`);
    await sleep(50);
  }
}
const task = (ask: Ask, taskId: string) => ask('tasks/get', { taskId }).then(result);

/** Starts the eliciting tool as a task and waits for it to ask: its id and its one question's key. */
async function waitingTask(ask: Ask, ms = 5): Promise<{ taskId: string; key: string }> {
  const created = result(await ask('tools/call', { name: 'greet_user', arguments: { ms } }));
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = created.taskId as string;
  const waiting = await until(
    () => task(ask, taskId),
    (t) => t.status !== 'working',
    'the task asking',
  );
  expect(waiting).toMatchObject({
    resultType: 'complete',
    status: 'input_required',
    statusMessage: expect.stringContaining('tasks/update'),
  });
  const requests = waiting.inputRequests as Record<string, unknown>;
  const keys = Object.keys(requests);
  expect(keys).toHaveLength(1);
  expect(requests[keys[0]!]).toMatchObject({
    method: 'elicitation/create',
    params: { message: 'What is your name?', requestedSchema: { type: 'object' } },
  });
  return { taskId, key: keys[0]! };
}

/** Answered: bad updates refused and the task still waiting, the good one acked, the same job completes; a later update refused. */
async function answered(ask: Ask): Promise<void> {
  const { taskId, key } = await waitingTask(ask);
  // A snapshot: asked again, the same question under the same key.
  expect((await task(ask, taskId)).inputRequests).toHaveProperty(key);
  const refused = async (params: Record<string, unknown>, message: RegExp) =>
    expect((await ask('tasks/update', params)).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(message),
    });
  await refused({ taskId: 'no-such-task', inputResponses: { [key]: accept('x') } }, /not found/i);
  await refused({ taskId }, /needs inputResponses/);
  // Keys it does not wait for are ignored (the extension): acknowledged, and nothing changes.
  expect(result(await ask('tasks/update', { taskId, inputResponses: { 'not-a-key': accept('x') } })).resultType).toBe(
    'complete',
  );
  await refused({ taskId, inputResponses: { [key]: { action: 'maybe' } } }, /is not a ElicitResult/);
  expect(await task(ask, taskId)).toMatchObject({ status: 'input_required' });
  expect((await stats(ask)).tasksInputRequired).toBe(1);

  // Keys it does not wait for are ignored beside one it does (the extension).
  const ack = await ask('tasks/update', { taskId, inputResponses: { [key]: accept('octocat'), stale: accept('x') } });
  expect(ack.error).toBeUndefined();
  expect(result(ack).resultType).toBe('complete');
  const done = await until(
    () => task(ask, taskId),
    (t) => t.status !== 'input_required' && t.status !== 'working',
    'the task finishing',
  );
  expect(done).toMatchObject({
    status: 'completed',
    result: { content: [{ type: 'text', text: 'hello, octocat; prepared 1 time(s) in this thread' }] },
  });
  expect(done).not.toHaveProperty('inputRequests');
  await refused({ taskId, inputResponses: { [key]: accept('again') } }, /not waiting for input \(status 'completed'\)/);
  const st = await until(
    () => stats(ask),
    (x) => x.inFlight === 0,
    'the job settled',
  );
  expect(st).toMatchObject({
    tasksCompleted: 1,
    tasksInputRequired: 0,
    taskUpdates: 1,
    taskInputWaitsExpired: 0,
    cancelled: 0,
    hardKilled: 0,
  });
}

/** tasks/cancel while it waits: acked once decided, final at once, the slot reused by the next task. */
async function cancelledWhileWaiting(ask: Ask): Promise<void> {
  const { taskId, key } = await waitingTask(ask);
  const ack = await ask('tasks/cancel', { taskId });
  expect(result(ack)).toMatchObject({ resultType: 'complete' });
  expect(await task(ask, taskId)).toMatchObject({ status: 'cancelled' });
  expect((await ask('tasks/update', { taskId, inputResponses: { [key]: accept('late') } })).error).toMatchObject({
    code: -32602,
  });
  const st = await until(
    () => stats(ask),
    (x) => x.inFlight === 0,
    'the job stopped',
  );
  expect(st).toMatchObject({ tasksCancelled: 1, cancelled: 1, hardKilled: 0, tasksInputRequired: 0, taskUpdates: 0 });
  // One thread: the next task runs on the freed slot, and asks in turn.
  const next = await waitingTask(ask);
  expect(await task(ask, next.taskId)).toMatchObject({ status: 'input_required' });
}

describe('2026 tasks that ask the client, over stdio', () => {
  it('input_required with inputRequests in tasks/get; bad tasks/update refused; the good one resumes the same job, which completes', async () => {
    const { s, ask } = stdio();
    await answered(ask);
    // 2026 has no server-to-client requests: the question went out only inside tasks/get.
    expect(s.lines.filter((m) => typeof m.method === 'string')).toEqual([]);
  });

  it('tasks/cancel while input_required: cancelled at once, nothing more sent, the slot reused', async () => {
    const { s, ask } = stdio();
    await cancelledWhileWaiting(ask);
    expect(s.lines.filter((m) => typeof m.method === 'string')).toEqual([]);
  });

  it('no answer within --input-wait-ms: the task is cancelled through the CAS (counted, slot freed), a late update refused', async () => {
    const { ask } = stdio(['--input-wait-ms', '300']);
    const { taskId, key } = await waitingTask(ask);
    const final = await until(
      () => task(ask, taskId),
      (t) => t.status !== 'input_required',
      'the wait to end',
    );
    expect(final).toMatchObject({ status: 'cancelled', statusMessage: expect.stringContaining('--input-wait-ms') });
    expect((await ask('tasks/update', { taskId, inputResponses: { [key]: accept('late') } })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('not waiting for input'),
    });
    const st = await until(
      () => stats(ask),
      (x) => x.inFlight === 0,
      'the job stopped',
    );
    expect(st).toMatchObject({
      taskInputWaitsExpired: 1,
      tasksCancelled: 1,
      cancelled: 1,
      hardKilled: 0,
      tasksInputRequired: 0,
    });
  });

  it('a task whose request did not declare elicitation is never asked: its question fails in the tool, which ends with a tool error', async () => {
    const s = new LineServer(BASE);
    open.push({ close: () => s.kill() });
    s.send(modernRequest('t', 'tools/call', { name: 'greet_user', arguments: {} }, { tasks: true }));
    const created = result(await s.answer('t', SLOW_MS));
    const ask: Ask = (method, params) => {
      const id = `r${n++}`;
      s.send(modernRequest(id, method, params, { tasks: true }));
      return s.answer(id, SLOW_MS);
    };
    const final = await until(
      () => task(ask, created.taskId as string),
      (t) => t.status !== 'working',
      'the task ending',
    );
    // The extension: a tool result, isError or not, makes the task completed.
    expect(final).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(JSON.stringify(final)).toContain("did not declare the 'elicitation' capability");
  });
});

describe('2026 tasks that ask the client, over Streamable HTTP', () => {
  it('input_required with inputRequests in tasks/get on other POSTs; tasks/update on another POST resumes the same job, which completes', async () => {
    const { ask } = await http();
    await answered(ask);
  });

  it('tasks/cancel while input_required: cancelled at once, the slot reused', async () => {
    const { ask } = await http();
    await cancelledWhileWaiting(ask);
  });
});
