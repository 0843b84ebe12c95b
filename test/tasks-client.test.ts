/**
 * CancelAwareClient.callToolAsTask over stdio, against this server and
 * against a plain SDK server with the SDK's own tasks: aborting sends
 * tasks/cancel once, only while the task is not terminal, never
 * notifications/cancelled.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage, Progress, Task } from '@modelcontextprotocol/sdk/types.js';
import { CallAbortedError, CancelAwareClient } from '../dist/src/client/index.js';
import { CLI, sleep, until } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const SDK_TASK_SERVER = fileURLToPath(new URL('../dist-dev/test/fixtures/sdk-task-server.js', import.meta.url));

type Msg = JSONRPCMessage & { id?: unknown; method?: string; params?: Record<string, unknown> };

const open: CancelAwareClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
});

async function connect(args: string[]): Promise<{ client: CancelAwareClient; sent: Msg[] }> {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' });
  const sent: Msg[] = [];
  const send = transport.send.bind(transport);
  transport.send = (m: JSONRPCMessage) => {
    sent.push(m);
    return send(m);
  };
  // The 2025-11-25 tasks methods; client-2026.test.ts has the extension's.
  const client = new CancelAwareClient(
    { name: 'tasks-client', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  open.push(client);
  return { client, sent };
}

const ours = () => connect([CLI, 'serve', '--tools', TASK_TOOLS]);
const cancelsOf = (sent: Msg[]) => sent.filter((m) => m.method === 'tasks/cancel');
const notificationsCancelled = (sent: Msg[]) => sent.filter((m) => m.method === 'notifications/cancelled');

async function serverStats(client: CancelAwareClient): Promise<Record<string, number>> {
  const r = await client.sdk.readResource({ uri: 'executor://stats' });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, number>;
}

describe('callToolAsTask against this server', () => {
  it('abort sends tasks/cancel once (never notifications/cancelled); result() rejects with CallAbortedError', async () => {
    const { client, sent } = await ours();
    const stop = new AbortController();
    const statuses: Task[] = [];
    const progress: Progress[] = [];
    const handle = await client.callToolAsTask(
      { name: 'spin', arguments: { ms: 60_000, stageMs: 10 } },
      { signal: stop.signal, onstatus: (t) => statuses.push(t), onprogress: (p) => progress.push(p) },
    );
    expect(handle.task.status).toBe('working');
    const result = handle.result();
    await until(() => progress.length > 0, 10_000, 'progress of the task');
    stop.abort('user pressed Stop');
    stop.abort('again');
    const again = handle.cancel('and again'); // shares the one request
    const error = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error).toMatchObject({ name: 'AbortError', reason: 'user pressed Stop', cancelSent: true });
    expect(await again).toBe(true);
    await expect(handle.result()).rejects.toBeInstanceOf(CallAbortedError);
    const progressAtCancel = progress.length;
    await sleep(200);
    expect(progress.length).toBe(progressAtCancel); // nothing surfaces after the accepted cancel
    expect(cancelsOf(sent)).toHaveLength(1);
    expect(cancelsOf(sent)[0]!.params).toEqual({ taskId: handle.taskId });
    expect(notificationsCancelled(sent)).toEqual([]);
    expect(handle.task.status).toBe('cancelled');
    expect(statuses.at(-1)?.status).toBe('cancelled');
    expect(client.stats()).toMatchObject({ taskCancelsSent: 1, cancelsSent: 0 });
    expect(await serverStats(client)).toMatchObject({ tasksCancelled: 1, cancelled: 1 });
  });

  it('abort after completion sends nothing', async () => {
    const { client, sent } = await ours();
    const stop = new AbortController();
    const handle = await client.callToolAsTask({ name: 'spin', arguments: { ms: 5 } }, { signal: stop.signal });
    const result = await handle.result();
    expect((result.content[0] as { text: string }).text).toMatch(/^spun 5 slices/);
    stop.abort('too late');
    expect(await handle.cancel()).toBe(false); // the task is known to be terminal
    await sleep(100);
    expect(cancelsOf(sent)).toEqual([]);
    expect(notificationsCancelled(sent)).toEqual([]);
    expect(client.stats()).toMatchObject({ taskCancelsSent: 0, staleTaskCancelsSuppressed: 1 });
    expect(await handle.result()).toEqual(result);
  });

  it('a terminal status notification is enough: a later abort sends nothing', async () => {
    const { client, sent } = await ours();
    const stop = new AbortController();
    const statuses: Task[] = [];
    const handle = await client.callToolAsTask(
      { name: 'spin', arguments: { ms: 5 } },
      { signal: stop.signal, onstatus: (t) => statuses.push(t) },
    );
    await until(() => statuses.some((t) => t.status === 'completed'), 5_000, 'the completed status notification');
    stop.abort();
    await sleep(100);
    expect(cancelsOf(sent)).toEqual([]);
    expect((await handle.status()).status).toBe('completed');
  });

  it('a signal aborted before the call sends nothing', async () => {
    const { client, sent } = await ours();
    const stop = new AbortController();
    stop.abort('never mind');
    await expect(
      client.callToolAsTask({ name: 'spin', arguments: { ms: 5 } }, { signal: stop.signal }),
    ).rejects.toBeInstanceOf(CallAbortedError);
    expect(sent.filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  it('the tool error of a failed task comes back from result()', async () => {
    const { client } = await ours();
    const handle = await client.callToolAsTask({ name: 'short_deadline', arguments: { ms: 10_000 } });
    const result = await handle.result();
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: "tool 'short_deadline' timed out after 150 ms and was stopped" }],
    });
    expect((await handle.status()).status).toBe('failed');
  });
});

describe("callToolAsTask against a plain SDK server with the SDK's tasks", () => {
  it('completes, and an abort is a tasks/cancel there too', async () => {
    const { client, sent } = await connect([SDK_TASK_SERVER]);
    const done = await client.callToolAsTask({ name: 'delay', arguments: { ms: 20 } });
    expect(await done.result()).toMatchObject({ content: [{ type: 'text', text: 'delayed 20 ms' }] });
    const stop = new AbortController();
    const slow = await client.callToolAsTask({ name: 'delay', arguments: { ms: 60_000 } }, { signal: stop.signal });
    const result = slow.result();
    await sleep(50);
    stop.abort('stop');
    await expect(result).rejects.toBeInstanceOf(CallAbortedError);
    expect(cancelsOf(sent).map((m) => m.params)).toEqual([{ taskId: slow.taskId }]);
    expect(notificationsCancelled(sent)).toEqual([]);
    expect((await slow.status()).status).toBe('cancelled');
  });
});
