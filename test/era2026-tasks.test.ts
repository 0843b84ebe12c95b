/**
 * The tasks extension (io.modelcontextprotocol/tasks) in the 2026-07-28 era,
 * over stdio with the server as a subprocess, in raw JSON-RPC: declared per
 * request, a flat CreateTaskResult, tasks/get with the result inline,
 * tasks/cancel acknowledged only once decided, tasks/update; and one store
 * for both eras on one connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LineServer, type Wire } from './line-client.js';
import { sleep } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';
import { TASKS, modernHeaders, modernRequest } from './modern-helpers.js';
import { initializeBody, listening, messagesIn, post as post2025 } from './http-helpers.js';

const STARTUP_MS = 30_000;
let open: LineServer[] = [];
afterEach(() => {
  for (const s of open) s.kill();
  open = [];
});
function server(): LineServer {
  const s = new LineServer(['--threads', '1', '--spare-threads', '0', '--tools', TASK_TOOLS]);
  open.push(s);
  return s;
}
const result = (m: Wire) => m.result as Record<string, unknown>;
let n = 0;
async function ask(s: LineServer, method: string, params: Record<string, unknown>, tasks = true): Promise<Wire> {
  const id = `r${n++}`;
  s.send(modernRequest(id, method, params, { tasks }));
  return s.answer(id, STARTUP_MS);
}
async function poll(
  s: LineServer,
  taskId: string,
  done: (status: string) => boolean,
): Promise<Record<string, unknown>> {
  const end = Date.now() + 30_000;
  for (;;) {
    const r = result(await ask(s, 'tasks/get', { taskId }));
    if (done(r.status as string) || Date.now() > end) return r;
    await sleep(50);
  }
}

describe('tasks extension, 2026-07-28', () => {
  it('a required tool without the extension declared gets -32021 naming it; with it, a flat CreateTaskResult, then tasks/get with the result inline', async () => {
    const s = server();
    const refused = await ask(s, 'tools/call', { name: 'only_task', arguments: { ms: 1 } }, false);
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const created = result(await ask(s, 'tools/call', { name: 'only_task', arguments: { ms: 50 } }));
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created).not.toHaveProperty('task'); // flat, not the 2025 { task }
    expect(typeof created.taskId).toBe('string');
    expect(typeof created.ttlMs).toBe('number');
    expect(created).not.toHaveProperty('ttl');
    const final = await poll(s, created.taskId as string, (st) => st !== 'working');
    expect(final).toMatchObject({
      status: 'completed',
      resultType: 'complete',
      result: { content: [{ type: 'text', text: 'only_task spun 50 ms' }] },
    });
  });

  it('an optional tool that ends within --task-after-ms is answered directly, not as a task, even with the extension declared', async () => {
    const s = server();
    const direct = result(await ask(s, 'tools/call', { name: 'tool_error', arguments: {} }));
    expect(direct).toMatchObject({ resultType: 'complete', isError: true });
    expect(direct).not.toHaveProperty('taskId');
  });

  it('tasks/cancel of a running task: an empty ack with resultType complete, and a tasks/get right after it already says cancelled; the work stopped', async () => {
    const s = server();
    const created = result(await ask(s, 'tools/call', { name: 'only_task', arguments: { ms: 60_000 } }));
    await sleep(200);
    const ack = result(await ask(s, 'tasks/cancel', { taskId: created.taskId }));
    expect(ack).toMatchObject({ resultType: 'complete' });
    expect(Object.keys(ack).filter((k) => k !== '_meta' && k !== 'resultType')).toEqual([]);
    const now = result(await ask(s, 'tasks/get', { taskId: created.taskId }));
    expect(now.status).toBe('cancelled');
    expect(now).not.toHaveProperty('result');
    // One thread, no standby: this runs only because the cancelled job gave its thread back.
    const next = result(await ask(s, 'tools/call', { name: 'never_task', arguments: { ms: 1 } }));
    expect(next).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'never_task spun 1 ms' }] });
    const stats = JSON.parse(
      (result(await ask(s, 'resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
    ) as Record<string, number>;
    expect(stats).toMatchObject({ tasksCancelled: 1, hardKilled: 0, running: 0 });
  });

  it('tasks/update and tasks/get of an unknown task get -32602; 2025-only tasks/result and tasks/list are not served to 2026 requests', async () => {
    const s = server();
    expect((await ask(s, 'tasks/update', { taskId: 'nope', inputResponses: {} })).error).toMatchObject({
      code: -32602,
    });
    expect((await ask(s, 'tasks/get', { taskId: 'nope' })).error).toMatchObject({ code: -32602 });
    expect((await ask(s, 'tasks/result', { taskId: 'nope' })).error).toMatchObject({ code: -32601 });
    expect((await ask(s, 'tasks/list', {})).error).toMatchObject({ code: -32601 });
  });
});

describe('tasks extension over Streamable HTTP', () => {
  it('a 2026 task belongs to the caller, not to a session: another POST of the same caller reads it, a 2025 session of that caller does not', async () => {
    const TOKEN = 'tasks-owner-token-0123456789';
    const server = await listening(['--threads', '1', '--tools', TASK_TOOLS], { MCP_CANCEL_POOL_AUTH_TOKEN: TOKEN });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const post = async (body: ReturnType<typeof modernRequest>) => {
        const r = await fetch(server.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...modernHeaders(body),
            ...auth,
          },
          body: JSON.stringify(body),
        });
        return messagesIn(await r.text()).find((m) => m.id === body.id)!;
      };
      const created = (
        await post(modernRequest('c', 'tools/call', { name: 'only_task', arguments: { ms: 1 } }, { tasks: true }))
      ).result as Record<string, unknown>;
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      let task: Record<string, unknown> = {};
      const end = Date.now() + 30_000;
      do
        task = (await post(modernRequest(`g${Date.now()}`, 'tasks/get', { taskId: created.taskId }, { tasks: true })))
          .result as Record<string, unknown>;
      while (task.status === 'working' && Date.now() < end);
      expect(task).toMatchObject({
        status: 'completed',
        result: { content: [{ type: 'text', text: 'only_task spun 1 ms' }] },
      });
      // The same token over 2025: a session of its own, which owns none of the caller's 2026 tasks.
      const init = await post2025(server.url, initializeBody(), auth);
      const sid = init.headers['mcp-session-id'] as string;
      await post2025(
        server.url,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { ...auth, 'mcp-session-id': sid },
      );
      const legacy = await post2025(
        server.url,
        { jsonrpc: '2.0', id: 'g25', method: 'tasks/get', params: { taskId: created.taskId } },
        { ...auth, 'mcp-session-id': sid },
      );
      expect(messagesIn(legacy.text)[0]!.error).toMatchObject({ code: -32602 });
    } finally {
      await server.stop();
    }
  });
});
