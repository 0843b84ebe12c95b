/**
 * The cancel-aware client in the 2026-07-28 era, against this server as a
 * subprocess over stdio and over Streamable HTTP on 127.0.0.1, with the SDK
 * 2.x transports: the same issuing-side guarantees as the 2025 tests in
 * client.test.ts (cancel once while pending, no stale cancel, a late
 * response absorbed, bounded memory), with the era's cancellation (stdio:
 * `notifications/cancelled`; HTTP: the request's response stream closed),
 * the era chosen by negotiation (`auto`), and tasks through the extension.
 */
import { fileURLToPath } from 'node:url';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport, type Task } from '@modelcontextprotocol/client';
import { CallAbortedError, CancelAwareClient } from '../dist/src/client/index.js';
import { Tap } from './client-helpers.js';
import { CLI, CLIENT_TOOLS, sleep, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';
import { MODERN } from './modern-helpers.js';

const SDK_TASK_SERVER = fileURLToPath(new URL('../dist-dev/test/fixtures/sdk-task-server.js', import.meta.url));
const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
type Kind = 'stdio' | 'http';

interface Session {
  readonly client: CancelAwareClient;
  readonly tap: Tap;
  readonly errors: Error[];
}

let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  cleanup = [];
});

/** Our server (or `command`) as a subprocess, a default (auto-negotiating) client on an SDK 2.x transport, tapped. */
async function start(
  kind: Kind,
  serverArgs: string[],
  options: { ttlMs?: number; command?: string[] } = {},
): Promise<Session> {
  let inner;
  if (kind === 'stdio') {
    inner = new StdioClientTransport({
      command: process.execPath,
      args: options.command ?? [CLI, 'serve', ...serverArgs],
      stderr: 'pipe',
    });
  } else {
    const server: HttpServerProcess = await startHttpServer(serverArgs);
    cleanup.push(() => server.stop());
    inner = new StreamableHTTPClientTransport(server.url);
  }
  const tap = new Tap(inner);
  const client = new CancelAwareClient(
    { name: 'client-2026', version: '1.0.0' },
    options.ttlMs === undefined ? {} : { cancelledTtlMs: options.ttlMs },
  );
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(tap);
  cleanup.push(() => client.close());
  return { client, tap, errors };
}

const serverStats = async (s: Session) => {
  const r = await s.client.sdk.readResource({ uri: 'executor://stats' });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, number>;
};
const spin = (ms: number, tag?: string) => ({
  name: 'spin',
  arguments: { ms, stageMs: 1, ...(tag !== undefined && { tag }) },
});
const CALL_TOOLS = ['--threads', '2', '--tools', CLIENT_TOOLS];

describe('era negotiation (auto, the default)', () => {
  it('our dual-era server is reached in 2026-07-28; a 2025-only server (SDK 1.32) in 2025-11-25, over the same client code', async () => {
    const modern = await start('stdio', CALL_TOOLS);
    expect(modern.client.era).toBe('modern');
    expect(modern.tap.sent[0]?.method).toBe('server/discover');
    expect(modern.tap.sent.some((m) => m.method === 'initialize')).toBe(false);
    expect((await modern.client.callTool(spin(1))).isError).toBeFalsy();

    const legacy = await start('stdio', [], { command: [SDK_TASK_SERVER] });
    expect(legacy.client.era).toBe('legacy');
    expect(legacy.tap.sent.some((m) => m.method === 'initialize')).toBe(true);
  });
});

describe.each(['stdio', 'http'] as Kind[])('cancel-aware client, 2026-07-28 over %s', (kind) => {
  /** The cancellations that left, in the form this transport uses. */
  const cancelsOnWire = (s: Session) => s.tap.cancelsSent();

  it("abort while pending: cancelled once the era's way (stdio: notifications/cancelled with the envelope; HTTP: the stream closed), caller rejected at once", async () => {
    const s = await start(kind, CALL_TOOLS);
    expect(s.client.era).toBe('modern');
    const controller = new AbortController();
    let progress = 0;
    const call = s.client
      .callTool(spin(20_000, 'long'), { signal: controller.signal, onprogress: () => progress++ })
      .catch((e: unknown) => e);
    await until(() => progress > 0, 20_000, 'first progress');
    controller.abort('user pressed stop');
    controller.abort('again');
    const error = (await call) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error).toMatchObject({ name: 'AbortError', reason: 'user pressed stop', cancelSent: true });
    const id = s.tap.toolCallId((a) => a.tag === 'long');
    expect(error.requestId).toBe(id);
    const cancels = cancelsOnWire(s);
    if (kind === 'stdio') {
      expect(cancels).toHaveLength(1);
      expect(cancels[0]!.params).toMatchObject({
        requestId: id,
        reason: 'user pressed stop',
        _meta: { [PROTOCOL_VERSION]: MODERN },
      });
    } else {
      expect(cancels).toEqual([]); // 2026 HTTP: closing the stream is the cancellation
    }
    await until(async () => (await serverStats(s)).cancelled === 1, 10_000, 'server cancelled the job');
    expect(s.client.stats()).toMatchObject({ cancelsSent: 1, staleCancelsSuppressed: 0, pending: 0 });
    expect(s.tap.responsesFor(id)).toHaveLength(0);
    expect(s.errors).toEqual([]);
  });

  it('timeout while pending: cancelled the same way, rejected with a TimeoutError', async () => {
    const s = await start(kind, CALL_TOOLS);
    const error = (await s.client
      .callTool(spin(20_000), { timeout: 300 })
      .catch((e: unknown) => e)) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error).toMatchObject({ name: 'TimeoutError', cancelSent: true });
    expect(cancelsOnWire(s)).toHaveLength(kind === 'stdio' ? 1 : 0);
    await until(async () => (await serverStats(s)).cancelled === 1, 10_000, 'server cancelled the job');
  });

  it('stale cancellation suppressed: aborting after the response sends nothing and leaves no listener behind', async () => {
    const s = await start(kind, CALL_TOOLS);
    const controller = new AbortController();
    expect((await s.client.callTool(spin(1), { signal: controller.signal })).isError).toBeFalsy();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort('too late');
    await sleep(100);
    expect(cancelsOnWire(s)).toEqual([]);
    expect(s.client.stats()).toMatchObject({ cancelsSent: 0 });
    expect(await serverStats(s)).toMatchObject({ completed: 1, cancelled: 0 });
  });

  it('a response that arrives after the cancel is accepted and discarded: no error, the connection keeps working', async () => {
    const s = await start(kind, CALL_TOOLS);
    const controller = new AbortController();
    s.tap.hold((m) => m.method === undefined && m.result !== undefined && 'content' in m.result); // the tool result stays "in the network"
    const rejected = s.client.callTool(spin(30), { signal: controller.signal }).catch((e: unknown) => e);
    await until(() => s.tap.held.length === 1, 20_000, 'the response to be on its way');
    controller.abort('raced');
    expect(((await rejected) as CallAbortedError).cancelSent).toBe(true); // the client had not seen it: still pending
    expect(s.client.stats()).toMatchObject({ cancelsSent: 1, cancelling: 1 });
    s.tap.release();
    await sleep(50);
    expect(s.client.stats()).toMatchObject({ lateResponsesIgnored: 1, cancelling: 0, pending: 0 });
    expect(s.errors).toEqual([]);
    expect((await s.client.callTool(spin(1))).isError).toBeFalsy();
    expect((await serverStats(s)).completed).toBe(2);
  });

  it('entries of cancelled requests are dropped after the TTL, so memory stays flat', async () => {
    const s = await start(kind, CALL_TOOLS, { ttlMs: 150 });
    for (let round = 0; round < 3; round++) {
      const calls = Array.from({ length: 20 }, (_, i) =>
        s.client.callTool(spin(10_000, `${round}-${i}`), { timeout: 200 }).catch((e: unknown) => e),
      );
      const errors = await Promise.all(calls);
      expect(errors.every((e) => e instanceof CallAbortedError && e.name === 'TimeoutError')).toBe(true);
      await until(() => s.client.registry.size === 0, 5000, 'cancelled entries to expire');
    }
    expect(s.client.stats()).toMatchObject({ pending: 0, cancelling: 0 });
    expect(s.client.stats().cancelsSent).toBeLessThanOrEqual(60);
    await until(async () => (await serverStats(s)).inFlight === 0, 20_000, 'server settled');
  });
});

describe.each(['stdio', 'http'] as Kind[])('callToolAsTask, 2026-07-28 tasks extension over %s', (kind) => {
  const TASK_ARGS = ['--threads', '1', '--spare-threads', '0', '--tools', TASK_TOOLS];

  it('abort sends tasks/cancel once (never notifications/cancelled, no stream closed for it); result() rejects; onstatus: working once, cancelled once; the work stopped', async () => {
    const s = await start(kind, TASK_ARGS);
    const stop = new AbortController();
    const statuses: Task['status'][] = [];
    const handle = await s.client.callToolAsTask(
      { name: 'only_task', arguments: { ms: 60_000 } },
      { signal: stop.signal, onstatus: (t) => statuses.push(t.status) },
    );
    expect(handle.task.status).toBe('working');
    const call = s.tap.sent.find((m) => m.method === 'tools/call');
    expect(
      (call?.params?._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'],
    ).toMatchObject({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
    const result = handle.result().catch((e: unknown) => e);
    await until(async () => (await serverStats(s)).inFlight === 1, 20_000, 'the task to run');
    stop.abort('user pressed Stop');
    const again = handle.cancel('and again');
    expect(await result).toBeInstanceOf(CallAbortedError);
    expect(await again).toBe(true);
    const cancels = s.tap.sent.filter((m) => m.method === 'tasks/cancel');
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.params).toMatchObject({ taskId: handle.taskId });
    expect(s.tap.cancelsSent()).toEqual([]);
    expect(handle.task.status).toBe('cancelled');
    await sleep(100);
    expect(statuses).toEqual(['working', 'cancelled'].slice(statuses[0] === 'working' ? 0 : 1));
    expect(statuses.filter((x) => x === 'cancelled')).toHaveLength(1);
    expect(s.client.stats()).toMatchObject({ taskCancelsSent: 1, cancelsSent: 0 });
    await until(async () => (await serverStats(s)).inFlight === 0, 20_000, 'the work to stop');
    expect(await serverStats(s)).toMatchObject({ tasksCancelled: 1, cancelled: 1, hardKilled: 0 });
  });

  it('completes: result() by tasks/get, completed reported once; an abort after it sends nothing; a tool the server answers directly is a completed handle', async () => {
    const s = await start(kind, TASK_ARGS);
    const stop = new AbortController();
    const statuses: Task['status'][] = [];
    const handle = await s.client.callToolAsTask(
      { name: 'only_task', arguments: { ms: 50 } },
      { signal: stop.signal, onstatus: (t) => statuses.push(t.status) },
    );
    expect(await handle.result()).toMatchObject({ content: [{ type: 'text', text: 'only_task spun 50 ms' }] });
    expect(statuses.filter((x) => x === 'completed')).toHaveLength(1);
    expect(handle.task.status).toBe('completed');
    stop.abort('too late');
    expect(await handle.cancel()).toBe(false);
    expect(s.tap.sent.filter((m) => m.method === 'tasks/cancel')).toEqual([]);
    expect(s.tap.sent.filter((m) => m.method === 'tasks/result')).toEqual([]); // not part of the extension
    expect(s.client.stats()).toMatchObject({ taskCancelsSent: 0 });

    const direct = await s.client.callToolAsTask({ name: 'tool_error', arguments: {} });
    expect(direct.task.status).toBe('completed');
    expect(await direct.result()).toMatchObject({ isError: true });
  });
});
