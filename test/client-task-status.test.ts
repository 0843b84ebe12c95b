/**
 * `callToolAsTask`'s `onstatus` reports each status change once. A cancelled
 * task's `cancelled` reaches the client twice (the server's
 * `notifications/tasks/status` and the `tasks/cancel` answer): it used to
 * fire twice; the docs/tasks.md example prints each status, as a new user sees it.
 * Statuses read in the same chunk as the `CreateTaskResult` are handled
 * before the handle exists, and used to be dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage, Task } from '@modelcontextprotocol/sdk/types.js';
import { CallAbortedError, CancelAwareClient } from '../dist/src/client/index.js';
import { CLI, sleep, until } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const open: CancelAwareClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
});

async function ours(): Promise<{
  client: CancelAwareClient;
  received: JSONRPCMessage[];
  transport: StdioClientTransport;
}> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--tools', TASK_TOOLS],
    stderr: 'pipe',
  });
  // The 2025-11-25 era, where cancelled arrives twice; client-2026.test.ts has the extension's.
  const client = new CancelAwareClient(
    { name: 'task-status', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  open.push(client);
  const received: JSONRPCMessage[] = [];
  const onmessage = transport.onmessage!;
  transport.onmessage = (m: JSONRPCMessage) => {
    received.push(m);
    onmessage(m);
  };
  return { client, received, transport };
}

describe('callToolAsTask onstatus', () => {
  it('a cancelled task reports working once and cancelled once, although cancelled arrives twice on the wire', async () => {
    const { client, received } = await ours();
    const stop = new AbortController();
    const statuses: Task['status'][] = [];
    const handle = await client.callToolAsTask(
      { name: 'spin', arguments: { ms: 60_000, stageMs: 10 } },
      { signal: stop.signal, onstatus: (t) => statuses.push(t.status) },
    );
    const result = handle.result();
    await sleep(200);
    await handle.status(); // learns 'working' again: not a change
    stop.abort('user pressed Stop');
    await expect(result).rejects.toBeInstanceOf(CallAbortedError);
    const cancelledOnWire = () =>
      received.filter((m) => {
        const x = m as { method?: string; params?: { status?: string; taskId?: string }; result?: { status?: string } };
        return (
          (x.method === 'notifications/tasks/status' && x.params?.status === 'cancelled') ||
          x.result?.status === 'cancelled'
        );
      }).length;
    await until(() => cancelledOnWire() >= 2, 30_000, 'the cancelled status notification and the tasks/cancel answer');
    await sleep(100);
    expect(statuses.filter((s) => s === 'cancelled')).toEqual(['cancelled']);
    expect(statuses.at(-1)).toBe('cancelled');
    // No status repeats the one before it.
    expect(statuses.filter((s, i) => i > 0 && s === statuses[i - 1])).toEqual([]);
    expect((await handle.status()).status).toBe('cancelled');
    expect(statuses.filter((s) => s === 'cancelled')).toHaveLength(1);
  });

  it('a completed task reports completed once', async () => {
    const { client } = await ours();
    const statuses: Task['status'][] = [];
    const handle = await client.callToolAsTask(
      { name: 'spin', arguments: { ms: 5 } },
      { onstatus: (t) => statuses.push(t.status) },
    );
    await handle.result();
    await until(() => statuses.includes('completed'), 30_000, 'completed');
    await handle.status();
    await handle.status();
    await sleep(100);
    expect(statuses.filter((s) => s === 'completed')).toEqual(['completed']);
  });

  it('statuses that arrive in the same read as the CreateTaskResult still reach the handle', async () => {
    const { client, transport } = await ours();
    // Hold the tools/call answer and the task's status notifications until the terminal one, then hand them to
    // the client in one synchronous run, as the stdio transport does with the lines of one chunk.
    const onmessage = transport.onmessage!;
    const held: JSONRPCMessage[] = [];
    let answer: JSONRPCMessage | undefined;
    let terminal = false;
    let released = false;
    transport.onmessage = (m: JSONRPCMessage) => {
      const x = m as { result?: { task?: unknown }; method?: string; params?: { status?: string } };
      if (released) return onmessage(m);
      if (x.result?.task !== undefined) answer = m;
      else if (x.method === 'notifications/tasks/status') {
        held.push(m);
        terminal ||= x.params?.status === 'completed' || x.params?.status === 'failed';
      } else return onmessage(m);
      if (!answer || !terminal) return;
      released = true;
      for (const message of [answer, ...held]) onmessage(message);
    };
    const statuses: Task['status'][] = [];
    const handle = await client.callToolAsTask(
      { name: 'spin', arguments: { ms: 5 } },
      { onstatus: (t) => statuses.push(t.status) },
    );
    expect(released).toBe(true);
    expect(held.length).toBeGreaterThan(0);
    expect(handle.task.status).toBe('completed');
    expect(statuses.at(-1)).toBe('completed');
    expect(statuses.filter((s) => s === 'completed')).toEqual(['completed']);
    expect((await handle.result()).isError).toBeFalsy();
  });
});
