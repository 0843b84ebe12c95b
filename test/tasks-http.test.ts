/**
 * Tasks over real Streamable HTTP: a task outlives the streams of its
 * session and is read after reconnecting with the session id; sessions
 * cannot see each other's tasks; deleting a session cancels its tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { sleep, startHttpServer, stats, until, type HttpServerProcess } from './helpers.js';

let server: HttpServerProcess;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startHttpServer(['--threads', '2']);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await server.stop();
});

async function connect(
  sessionId?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; statuses: Task[] }> {
  const transport = new StreamableHTTPClientTransport(server.url, sessionId === undefined ? {} : { sessionId });
  const client = new Client({ name: 'tasks-http', version: '1.0.0' });
  const statuses: Task[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.push(n.params));
  await client.connect(transport);
  clients.push(client);
  return { client, transport, statuses };
}

const createTask = async (client: Client, args: Record<string, unknown>) =>
  (
    await client.request(
      { method: 'tools/call', params: { name: 'spin', arguments: args, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    )
  ).task;
const getTask = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
const taskResult = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema, { timeout: 30_000 });
const cancelTask = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);

async function codeOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (error) {
    return error instanceof McpError ? error.code : -1;
  }
}

describe('tasks over Streamable HTTP', () => {
  it('a task keeps running when every stream of its session drops, and is read after reconnecting with the session id', async () => {
    const a = await connect();
    const sessionId = a.transport.sessionId!;
    const before = await stats(a.client);
    const task = await createTask(a.client, { ms: 1_500 });
    // A tasks/result whose stream the client drops: the task must not take that for a cancel.
    const dropped = new AbortController();
    const waiting = fetch(server.url, {
      method: 'POST',
      signal: dropped.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'dropped-result',
        method: 'tasks/result',
        params: { taskId: task.taskId },
      }),
    }).then((res) => res.body?.getReader().read());
    await sleep(100);
    dropped.abort();
    await waiting.catch(() => undefined);
    await a.transport.close(); // the standalone GET stream goes too; no DELETE: the session lives on
    await sleep(200);

    const b = await connect(sessionId);
    expect((await getTask(b.client, task.taskId)).status).toBe('working');
    const result = await taskResult(b.client, task.taskId);
    expect((result.content[0] as { text: string }).text).toMatch(/^spun 1500 slices/);
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    const after = await stats(b.client);
    expect(after.tasksCompleted - before.tasksCompleted).toBe(1);
    expect(after.tasksCancelled - before.tasksCancelled).toBe(0);
    expect(after.cancelled - before.cancelled).toBe(0);
  });

  it('another session cannot see, read or cancel a task: "task not found"', async () => {
    const owner = await connect();
    const other = await connect();
    const task = await createTask(owner.client, { ms: 60_000 });
    expect(await codeOf(getTask(other.client, task.taskId))).toBe(-32602);
    expect(await codeOf(taskResult(other.client, task.taskId))).toBe(-32602);
    expect(await codeOf(cancelTask(other.client, task.taskId))).toBe(-32602);
    expect((await other.client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks).toEqual([]);
    expect((await getTask(owner.client, task.taskId)).status).toBe('working');
    expect(
      (await owner.client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks.map(
        (t) => t.taskId,
      ),
    ).toEqual([task.taskId]);
    expect((await cancelTask(owner.client, task.taskId)).status).toBe('cancelled');
    await until(
      () => owner.statuses.some((t) => t.taskId === task.taskId && t.status === 'cancelled'),
      5_000,
      'the status notification on the GET stream',
    );
  });

  it('deleting a session cancels its working tasks', async () => {
    const watcher = await connect();
    const doomed = await connect();
    const before = await stats(watcher.client);
    await createTask(doomed.client, { ms: 60_000 });
    await until(async () => (await stats(watcher.client)).running === before.running + 1, 10_000, 'the task to run');
    await doomed.transport.terminateSession();
    await until(
      async () => {
        const s = await stats(watcher.client);
        return s.tasksCancelled === before.tasksCancelled + 1 && s.running === before.running && s.stopping === 0;
      },
      10_000,
      'the task to be cancelled and its work stopped',
    );
    const s = await stats(watcher.client);
    expect(s.tasksStored).toBe(before.tasksStored); // its tasks went with it
    expect(s.hardKilled).toBe(before.hardKilled);
  });

  it('a session holding tasks is not closed for idleness; once they expired it is', async () => {
    const idle = await startHttpServer(['--session-idle-ms', '1000', '--max-task-ttl-ms', '4000']);
    try {
      const transport = new StreamableHTTPClientTransport(idle.url);
      const client = new Client({ name: 'tasks-http-idle', version: '1.0.0' });
      await client.connect(transport);
      const sessionId = transport.sessionId!;
      const task = (
        await client.request(
          { method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 }, task: { ttl: 60_000 } } },
          CreateTaskResultSchema,
        )
      ).task;
      expect(task.ttl).toBe(4_000);
      await taskResult(client, task.taskId);
      await transport.close();
      await sleep(2_500); // idle past --session-idle-ms, sweeps every second
      const back = new Client({ name: 'tasks-http-idle', version: '1.0.0' });
      await back.connect(new StreamableHTTPClientTransport(idle.url, { sessionId }));
      expect((await getTask(back, task.taskId)).status).toBe('completed');
      await back.close();
      // Past the ttl (4 s from creation) the task is gone, and then the idle session is closed too.
      // One probe only: a request would make the session busy again.
      await sleep(5_000);
      const r = await fetch(idle.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await r.body?.cancel();
      expect(r.status).toBe(404);
    } finally {
      await idle.stop();
    }
  });
});
