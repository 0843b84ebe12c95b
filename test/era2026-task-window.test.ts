/**
 * --task-after-ms, 2026-07-28, over the real wire (stdio with the server as a
 * subprocess, and Streamable HTTP on 127.0.0.1): a call of an `optional` task
 * tool from a client that declared the tasks extension is answered directly
 * if it ends within the window, else it becomes a task; the decision is taken
 * once, so every call gets exactly one of the two (or, cancelled in its
 * window, nothing at all).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LineServer, type Wire } from './line-client.js';
import { sleep, startHttpServer, type HttpServerProcess } from './helpers.js';
import { messagesIn, sseMessages } from './http-helpers.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';

type Stats = Record<string, number> &
  Record<'completed' | 'tasksAnsweredDirectly' | 'tasksCreated' | 'tasksCompleted', number>;
const result = (m: Wire | undefined) => (m?.result ?? {}) as Record<string, unknown>;

/** Answers by id, read incrementally off a line server (a storm has thousands). */
class Answers {
  private seen = 0;
  readonly byId = new Map<unknown, Wire[]>();
  constructor(private readonly s: LineServer) {}
  private pump(): void {
    for (; this.seen < this.s.lines.length; this.seen++) {
      const m = this.s.lines[this.seen]!;
      if (m.id === undefined || 'method' in m) continue;
      const list = this.byId.get(m.id) ?? [];
      list.push(m);
      this.byId.set(m.id, list);
    }
  }
  async of(id: unknown, ms = 60_000): Promise<Wire> {
    const end = Date.now() + ms;
    for (;;) {
      this.pump();
      const found = this.byId.get(id)?.[0];
      if (found) return found;
      if (Date.now() > end) throw new Error(`no answer to ${JSON.stringify(id)}; stderr ${this.s.stderr.slice(-400)}`);
      await sleep(5);
    }
  }
  count(id: unknown): number {
    this.pump();
    return this.byId.get(id)?.length ?? 0;
  }
}

let lineServers: LineServer[] = [];
let httpServers: HttpServerProcess[] = [];
afterEach(async () => {
  for (const s of lineServers) s.kill();
  lineServers = [];
  for (const s of httpServers) await s.stop();
  httpServers = [];
});

function stdio(args: string[]): {
  s: LineServer;
  answers: Answers;
  ask: (method: string, params: Record<string, unknown>, tasks?: boolean) => Promise<Wire>;
  stats: () => Promise<Stats>;
} {
  const s = new LineServer(['--spare-threads', '0', ...args]);
  lineServers.push(s);
  const answers = new Answers(s);
  let n = 0;
  const ask = async (method: string, params: Record<string, unknown>, tasks = true) => {
    const id = `q${n++}`;
    s.send(modernRequest(id, method, params, { tasks }));
    return answers.of(id);
  };
  const stats = async () =>
    JSON.parse(
      (result(await ask('resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
    ) as Stats;
  return { s, answers, ask, stats };
}

async function pollDone(
  ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>,
  taskId: string,
): Promise<Record<string, unknown>> {
  const end = Date.now() + 60_000;
  for (;;) {
    const r = await ask('tasks/get', { taskId });
    if (r.status !== 'working' || Date.now() > end) return r;
    await sleep(50);
  }
}

/** A seeded generator: the storms are the same every run. */
function rng(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
}

const SPUN = /^spun \d+ slices in [\d.]+ ms$/;

describe('--task-after-ms over 2026 stdio', () => {
  it('default window (1000 ms): a quick call is answered directly, a slow one becomes a task whose tasks/get later has the result; without the extension, never a task', async () => {
    const { ask, stats } = stdio(['--threads', '1']);
    const quick = result(await ask('tools/call', { name: 'spin', arguments: { ms: 1 } }));
    expect(quick).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: expect.stringMatching(SPUN) }],
    });
    expect(quick).not.toHaveProperty('taskId');
    const slow = result(await ask('tools/call', { name: 'spin', arguments: { ms: 3000 } }));
    expect(slow).toMatchObject({ resultType: 'task', status: 'working' });
    const final = await pollDone((m, p) => ask(m, p).then(result), slow.taskId as string);
    expect(final).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: expect.stringMatching(SPUN) }] },
    });
    const plain = result(await ask('tools/call', { name: 'spin', arguments: { ms: 1500 } }, false));
    expect(plain).toMatchObject({ resultType: 'complete' });
    expect(await stats()).toMatchObject({
      tasksAnsweredDirectly: 1,
      tasksCreated: 1,
      tasksCompleted: 1,
      completed: 3,
      failed: 0,
      responsesDropped: 0,
    });
  });

  it('--task-after-ms 0: always a task, however quick', async () => {
    const { ask, stats } = stdio(['--threads', '1', '--task-after-ms', '0']);
    const created = result(await ask('tools/call', { name: 'spin', arguments: { ms: 0 } }));
    expect(created).toMatchObject({ resultType: 'task' });
    expect(await pollDone((m, p) => ask(m, p).then(result), created.taskId as string)).toMatchObject({
      status: 'completed',
    });
    expect(await stats()).toMatchObject({ tasksAnsweredDirectly: 0, tasksCreated: 1 });
  });

  it('cancelled in its window (notifications/cancelled), running or not begun yet: nothing is ever sent for it, it never becomes a task, the slot is reused', async () => {
    const { s, answers, ask, stats } = stdio(['--threads', '1', '--task-after-ms', '800']);
    await stats(); // the server is up: what follows is decided in the window, not at start-up
    s.send(
      modernRequest(
        'w',
        'tools/call',
        { name: 'spin', arguments: { ms: 30_000 }, _meta: { progressToken: 'w' } },
        { tasks: true },
      ),
    );
    await s.until(
      () =>
        s.lines.some(
          (m) =>
            m.method === 'notifications/progress' && (m.params as { progressToken?: unknown }).progressToken === 'w',
        ),
      30_000,
      'progress of w',
    );
    const cancel = (requestId: string) =>
      s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'changed my mind' } });
    cancel('w');
    // Right behind its call, in the same read: the cancel comes before the handler has begun the job.
    s.send(modernRequest('e', 'tools/call', { name: 'spin', arguments: { ms: 30_000 } }, { tasks: true }));
    cancel('e');
    // Past the window: had the cancels not decided them, this is when they would have become tasks.
    await sleep(1500);
    const next = result(await ask('tools/call', { name: 'spin', arguments: { ms: 1 } }));
    expect(next).toMatchObject({ resultType: 'complete' }); // one thread: the cancelled calls gave it back
    expect(answers.count('w')).toBe(0);
    expect(answers.count('e')).toBe(0);
    expect(await stats()).toMatchObject({
      cancelled: 2,
      tasksCreated: 0,
      tasksAnsweredDirectly: 1,
      hardKilled: 0,
      responsesDropped: 0,
      unknownCancelsIgnored: 0,
    });
  });

  it('storm: 500 calls with durations around a 40 ms window; each gets exactly one answer, direct or a task, and the counters add up', async () => {
    const { answers, s, ask, stats } = stdio(['--threads', '2', '--task-after-ms', '40']);
    const before = await stats();
    const n = 500;
    const random = rng(0x5eed);
    const kinds = new Map<string, 'direct' | 'task'>();
    const taskIds: string[] = [];
    let next = 0;
    const one = async (i: number) => {
      const id = `storm-${i}`;
      // Mostly around the window (20–60 ms), some far either side.
      const r = random();
      const ms = r < 0.1 ? 0 : r < 0.2 ? 150 : 20 + Math.floor(random() * 40);
      s.send(modernRequest(id, 'tools/call', { name: 'spin', arguments: { ms } }, { tasks: true }));
      const answer = result(await answers.of(id));
      if (answer.resultType === 'task') {
        kinds.set(id, 'task');
        taskIds.push(answer.taskId as string);
        // A lane waits for its task before the next call, so the queue stays short and every decision is near the window.
        const final = await pollDone((m, p) => ask(m, p).then(result), answer.taskId as string);
        expect(final).toMatchObject({
          status: 'completed',
          result: { content: [{ type: 'text', text: expect.stringMatching(SPUN) }] },
        });
      } else {
        expect(answer).toMatchObject({
          resultType: 'complete',
          content: [{ type: 'text', text: expect.stringMatching(SPUN) }],
        });
        kinds.set(id, 'direct');
      }
    };
    // 4 calls in flight at a time over 2 threads: some wait in the queue, and the window counts that wait too.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < n) await one(next++);
      }),
    );
    await sleep(200); // a second answer for any id would have arrived by now
    for (let i = 0; i < n; i++) expect(answers.count(`storm-${i}`)).toBe(1);
    const direct = [...kinds.values()].filter((k) => k === 'direct').length;
    const tasks = taskIds.length;
    expect(direct + tasks).toBe(n);
    expect(direct).toBeGreaterThan(0);
    expect(tasks).toBeGreaterThan(0);
    const after = await stats();
    expect(after.tasksAnsweredDirectly - before.tasksAnsweredDirectly).toBe(direct);
    expect(after.tasksCreated - before.tasksCreated).toBe(tasks);
    expect(after.tasksCompleted - before.tasksCompleted).toBe(tasks);
    expect(after.completed - before.completed).toBe(n);
    expect(after).toMatchObject({ cancelled: 0, failed: 0, responsesDropped: 0, tasksWorking: 0 });
    console.log(`task-window storm (stdio): ${direct} direct, ${tasks} tasks of ${n}`);
  }, 240_000);
});

describe('--task-after-ms over 2026 Streamable HTTP', () => {
  async function http(args: string[]) {
    const server = await startHttpServer(['--spare-threads', '0', ...args]);
    httpServers.push(server);
    let n = 0;
    const post = (body: ReturnType<typeof modernRequest>, signal?: AbortSignal) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...modernHeaders(body),
        },
        body: JSON.stringify(body),
        ...(signal && { signal }),
      });
    const ask = async (method: string, params: Record<string, unknown>, tasks = true) => {
      const body = modernRequest(`h${n++}`, method, params, { tasks });
      const messages = messagesIn(await (await post(body)).text()).filter((m) => m.id === body.id);
      expect(messages).toHaveLength(1);
      return result(messages[0]);
    };
    const stats = async () =>
      JSON.parse(
        ((await ask('resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
      ) as Stats;
    return { server, post, ask, stats };
  }

  it('a quick call is answered directly, a slow one becomes a task that tasks/get on another POST finds completed; a stream closed in the window cancels the call, which never becomes a task', async () => {
    const { post, ask, stats } = await http(['--threads', '1', '--task-after-ms', '700']);
    expect(await ask('tools/call', { name: 'spin', arguments: { ms: 1 } })).toMatchObject({ resultType: 'complete' });
    const slow = await ask('tools/call', { name: 'spin', arguments: { ms: 2500 } });
    expect(slow).toMatchObject({ resultType: 'task', status: 'working' });
    expect(await pollDone(ask, slow.taskId as string)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: expect.stringMatching(SPUN) }] },
    });
    // Closed in its window: the close is the cancel.
    const controller = new AbortController();
    const r = await post(
      modernRequest(
        'closed',
        'tools/call',
        { name: 'spin', arguments: { ms: 30_000 }, _meta: { progressToken: 'closed' } },
        { tasks: true },
      ),
      controller.signal,
    );
    const { messages, ended } = sseMessages(r);
    const end = Date.now() + 10_000;
    while (messages.length === 0 && Date.now() < end) await sleep(10);
    expect(messages[0]?.method).toBe('notifications/progress'); // it runs, in its window
    controller.abort();
    await ended.catch(() => undefined);
    await sleep(1200); // past the window
    expect(await ask('tools/call', { name: 'spin', arguments: { ms: 1 } })).toMatchObject({ resultType: 'complete' }); // one thread: given back
    expect(messages.filter((m) => m.id === 'closed')).toHaveLength(0);
    expect(await stats()).toMatchObject({
      cancelled: 1,
      tasksCreated: 1,
      tasksCompleted: 1,
      tasksAnsweredDirectly: 2,
      hardKilled: 0,
      responsesDropped: 0,
    });
  });

  it('storm: 500 POSTs with durations around a 40 ms window; each gets exactly one answer, direct or a task, and the counters add up', async () => {
    const { post, ask, stats } = await http(['--threads', '2', '--task-after-ms', '40', '--queue-limit', '1000']);
    const before = await stats();
    const n = 500;
    const random = rng(0xbead);
    let direct = 0;
    const taskIds: string[] = [];
    let next = 0;
    const one = async (i: number) => {
      const r = random();
      const ms = r < 0.1 ? 0 : r < 0.2 ? 150 : 20 + Math.floor(random() * 40);
      const body = modernRequest(`s${i}`, 'tools/call', { name: 'spin', arguments: { ms } }, { tasks: true });
      const answers = messagesIn(await (await post(body)).text()).filter((m) => m.id === body.id);
      expect(answers).toHaveLength(1); // exactly one answer on the request's stream
      const answer = result(answers[0]);
      if (answer.resultType === 'task') {
        taskIds.push(answer.taskId as string);
        // As over stdio: a lane waits for its task, so the queue stays short and every decision is near the window.
        expect(await pollDone(ask, answer.taskId as string)).toMatchObject({
          status: 'completed',
          result: { content: [{ type: 'text', text: expect.stringMatching(SPUN) }] },
        });
      } else {
        expect(answer).toMatchObject({
          resultType: 'complete',
          content: [{ type: 'text', text: expect.stringMatching(SPUN) }],
        });
        direct++;
      }
    };
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < n) await one(next++);
      }),
    );
    expect(direct + taskIds.length).toBe(n);
    expect(direct).toBeGreaterThan(0);
    expect(taskIds.length).toBeGreaterThan(0);
    const after = await stats();
    expect(after.tasksAnsweredDirectly - before.tasksAnsweredDirectly).toBe(direct);
    expect(after.tasksCreated - before.tasksCreated).toBe(taskIds.length);
    expect(after.tasksCompleted - before.tasksCompleted).toBe(taskIds.length);
    expect(after.completed - before.completed).toBe(n);
    expect(after).toMatchObject({ cancelled: 0, failed: 0, responsesDropped: 0, tasksWorking: 0 });
    console.log(`task-window storm (HTTP): ${direct} direct, ${taskIds.length} tasks of ${n}`);
  }, 240_000);
});
