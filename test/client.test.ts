/**
 * Both ends of the connection: the cancel-aware client against this server,
 * over a real stdio subprocess and in memory. Covers the client's outbound
 * registry (cancel once while pending, no stale cancellation, late responses
 * absorbed, bounded memory, initialize never cancelled) and the server's
 * outbound requests from tools (cascade from a cancelled tool call, late
 * answers absorbed, ids colliding across directions).
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateMessageResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CallAbortedError, CancelAwareClient, type ServerRequestContext } from '../dist/src/client/index.js';
import {
  KINDS,
  openConnection,
  serverStats,
  type Connection,
  type Kind,
  type Msg,
  type ServerSetup,
} from './client-helpers.js';
import { sleep, until } from './helpers.js';

const LEGACY = { versionNegotiation: { mode: 'legacy' as const } };

interface Pending<T> {
  readonly params: Record<string, unknown> | undefined;
  readonly ctx: ServerRequestContext;
  answer(result: T): void;
}

interface Session {
  readonly conn: Connection;
  readonly client: CancelAwareClient;
  /** Sampling requests the server sent; each waits until the test answers it (or the server cancels it). */
  readonly sampling: Pending<CreateMessageResult>[];
  readonly elicitation: Pending<ElicitResult>[];
  /** Errors the SDK client reported through onerror. */
  readonly errors: Error[];
}

const modelSays = (text: string): CreateMessageResult => ({
  model: 'test-model',
  role: 'assistant',
  content: { type: 'text', text },
});

let open: Session[] = [];
afterEach(async () => {
  for (const s of open) {
    await s.client.close().catch(() => undefined);
    await s.conn.dispose();
  }
  open = [];
});

async function start(kind: Kind, options: { clientTtlMs?: number; server?: ServerSetup } = {}): Promise<Session> {
  const conn = await openConnection(kind, options.server);
  // This file is the 2025-11-25 era (our server speaks both; client-2026.test.ts has the other).
  const client = new CancelAwareClient(
    { name: 'test', version: '1.0.0' },
    { ...LEGACY, ...(options.clientTtlMs !== undefined && { cancelledTtlMs: options.clientTtlMs }) },
  );
  const sampling: Pending<CreateMessageResult>[] = [];
  const elicitation: Pending<ElicitResult>[] = [];
  const waitFor = <T>(
    list: Pending<T>[],
    params: Record<string, unknown> | undefined,
    ctx: ServerRequestContext,
    onCancel: T,
  ) =>
    new Promise<T>((resolve) => {
      list.push({ params, ctx, answer: resolve });
      // A cancelled handler still returns something; the client must not send it.
      ctx.signal.addEventListener('abort', () => resolve(onCancel), { once: true });
    });
  client.onSampling((params, ctx) =>
    waitFor(sampling, params as Record<string, unknown>, ctx, modelSays('answer after the cancel')),
  );
  client.onElicitation((params, ctx) =>
    waitFor(elicitation, params as Record<string, unknown>, ctx, { action: 'accept', content: { name: 'too late' } }),
  );
  client.onRoots(() => ({ roots: [{ uri: 'file:///data', name: 'data' }] }));
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(conn.tap);
  const s = { conn, client, sampling, elicitation, errors };
  open.push(s);
  return s;
}

const stats = (s: Session) => serverStats(s.client.sdk);

describe.each(KINDS)('cancel-aware client over %s', (kind) => {
  it('abort while pending: one notifications/cancelled with the original id and the reason, caller rejected at once', async () => {
    const s = await start(kind);
    const controller = new AbortController();
    let progress = 0;
    const call = s.client.callTool(
      { name: 'spin', arguments: { ms: 20_000, stageMs: 1 } },
      { signal: controller.signal, onprogress: () => progress++ },
    );
    const outcome = call.then(
      () => undefined,
      (e: unknown) => ({ e }),
    );
    await until(() => progress > 0, 30_000, 'first progress');
    // Nothing from the server reaches the client from here until the rejection: it cannot wait for the server.
    s.conn.tap.hold(() => true);
    controller.abort('user pressed stop');
    controller.abort('again'); // a second abort is a no-op
    const result = await outcome;
    const error = result?.e as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error.name).toBe('AbortError');
    expect(error.reason).toBe('user pressed stop');
    expect(error.cancelSent).toBe(true);
    s.conn.tap.release(); // rejected while every server message was held: at once, not when the server got round to it

    const id = s.conn.tap.toolCallId((a) => a.ms === 20_000);
    expect(error.requestId).toBe(id);
    const cancels = s.conn.tap.cancelsSent();
    expect(cancels).toHaveLength(1);
    expect(cancels[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'user pressed stop' },
    });
    await until(async () => (await stats(s)).cancelled === 1, 5000, 'server cancelled the job');
    expect(s.client.stats()).toMatchObject({ cancelsSent: 1, staleCancelsSuppressed: 0, pending: 0 });
    expect(s.conn.tap.responsesFor(id)).toHaveLength(0);
    expect(s.errors).toEqual([]);
  });

  it('timeout while pending: cancelled the same way, rejected with a TimeoutError', async () => {
    const s = await start(kind);
    const error = (await s.client
      .callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1 } }, { timeout: 150 })
      .catch((e: unknown) => e)) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error.name).toBe('TimeoutError');
    const cancels = s.conn.tap.cancelsSent();
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.params).toEqual({ requestId: error.requestId, reason: 'timed out after 150 ms' });
    await until(async () => (await stats(s)).cancelled === 1, 5000, 'server cancelled the job');
  });

  it('stale cancellation suppressed: aborting after the response sends nothing and leaves no listener behind', async () => {
    const s = await start(kind);
    const controller = new AbortController();
    const result = await s.client.callTool({ name: 'spin', arguments: { ms: 1 } }, { signal: controller.signal });
    expect(result.isError).toBeFalsy();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort('too late');

    // The same through the SDK's own signal handling (SDK 1.x sent a stale cancellation here; 2.x drops its listener, and the guard would stop one).
    const sdkSignal = new AbortController();
    await s.client.sdk.callTool({ name: 'spin', arguments: { ms: 1, tag: 'sdk' } }, { signal: sdkSignal.signal });
    sdkSignal.abort('too late as well');
    await sleep(100);
    expect(s.conn.tap.cancelsSent()).toEqual([]);
    expect(s.client.stats()).toMatchObject({ cancelsSent: 0 });
    expect(await stats(s)).toMatchObject({
      completed: 2,
      cancelled: 0,
      lateCancelsIgnored: 0,
      unknownCancelsIgnored: 0,
    });
  });

  it('a response that arrives after the cancel is accepted and discarded: no error, the connection keeps working', async () => {
    const s = await start(kind);
    const controller = new AbortController();
    s.conn.tap.hold((m) => m.method === undefined && m.result !== undefined && 'content' in m.result); // tool results stay "in the network"
    const call = s.client.callTool({ name: 'spin', arguments: { ms: 30 } }, { signal: controller.signal });
    const rejected = call.catch((e: unknown) => e);
    await until(() => s.conn.tap.held.length === 1, 10_000, 'the response to be on its way');
    controller.abort('raced');
    const error = (await rejected) as CallAbortedError;
    expect(error.cancelSent).toBe(true); // the client had not seen the response: the request was pending
    expect(s.client.stats()).toMatchObject({ cancelsSent: 1, cancelling: 1 });
    s.conn.tap.release();
    await sleep(50);
    expect(s.client.stats()).toMatchObject({ lateResponsesIgnored: 1, cancelling: 0, pending: 0 });
    expect(s.errors).toEqual([]);
    const next = await s.client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(next.isError).toBeFalsy();
    const server = await stats(s);
    expect(server.completed).toBe(2);
    expect((server.lateCancelsIgnored ?? 0) + (server.unknownCancelsIgnored ?? 0)).toBe(1); // completion won; the server ignored our notice
  });

  it('entries of cancelled requests are dropped after the TTL, so memory stays flat', async () => {
    const s = await start(kind, { clientTtlMs: 150 });
    for (let round = 0; round < 3; round++) {
      const calls = Array.from({ length: 20 }, (_, i) =>
        s.client
          .callTool({ name: 'spin', arguments: { ms: 10_000, stageMs: 1, tag: `${round}-${i}` } }, { timeout: 20 })
          .catch((e: unknown) => e),
      );
      const errors = await Promise.all(calls);
      expect(errors.every((e) => e instanceof CallAbortedError && e.cancelSent)).toBe(true);
      expect(s.client.stats().cancelling).toBe(20);
      await until(() => s.client.registry.size === 0, 2000, 'cancelled entries to expire');
    }
    expect(s.client.stats()).toMatchObject({ cancelsSent: 60, pending: 0, cancelling: 0 });
    await until(async () => (await stats(s)).inFlight === 0, 10_000, 'server settled');
  });

  it('never cancels initialize: an aborted connect closes the connection instead', async () => {
    const conn = await openConnection(kind);
    const client = new CancelAwareClient({ name: 'test', version: '1.0.0' }, LEGACY);
    conn.tap.hold((m) => m.result !== undefined && 'protocolVersion' in m.result); // the initialize answer is slow
    const controller = new AbortController();
    const connecting = client.connect(conn.tap, { signal: controller.signal }).catch((e: unknown) => e);
    await until(() => conn.tap.held.length === 1, 45_000, 'the initialize response to be on its way');
    controller.abort('user gave up');
    const error = (await connecting) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error.name).toBe('AbortError');
    expect(conn.tap.sent.map((m) => m.method)).toEqual(['initialize']);
    expect(conn.tap.cancelsSent()).toEqual([]);
    await conn.dispose();
  });

  it("a late answer to the server's cancelled request is absorbed by the server", async () => {
    const s = await start(kind);
    const controller = new AbortController();
    const call = s.client
      .callTool({ name: 'ask_model', arguments: {} }, { signal: controller.signal })
      .catch((e: unknown) => e);
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    const samplingId = s.sampling[0]!.ctx.requestId;
    controller.abort('stop');
    await call;
    await until(() => s.conn.tap.cancelsReceived().length === 1, 5000, 'server cancellation');
    if (s.conn.memory)
      expect(s.conn.memory.guard.clientRequests.get(samplingId)).toMatchObject({
        state: 'cancellationRequested',
        method: 'sampling/createMessage',
      });
    // A client that answers anyway (our client would not): the answer crossed the cancellation on the wire.
    await s.conn.tap.sendRaw({ jsonrpc: '2.0', id: samplingId, result: modelSays('late') } as Msg);
    await until(async () => (await stats(s)).lateClientResponsesIgnored === 1, 5000, 'late answer absorbed');
    if (s.conn.memory) {
      expect(s.conn.memory.errors).toEqual([]); // the SDK server never saw it, so no "unknown message ID"
      await until(
        () => s.conn.memory!.executor.registry.size + s.conn.memory!.guard.clientRequests.entries().length === 0,
        5000,
        `registry to empty: ${JSON.stringify([...s.conn.memory.executor.registry.all(), ...s.conn.memory.guard.clientRequests.entries()].map((e) => [e.direction, e.id, e.state]))}`,
      );
    }
    // The connection keeps working.
    expect((await s.client.callTool({ name: 'ask_roots', arguments: {} })).content).toEqual([
      { type: 'text', text: 'client has 1 roots' },
    ]);
  });

  it('a server cancellation naming one of our own request ids is ignored', async () => {
    const s = await start(kind);
    const call = s.client.callTool({ name: 'spin', arguments: { ms: 300 } });
    await until(() => s.conn.tap.toolCallId((a) => a.ms === 300) !== undefined, 5000, 'the call to leave'); // the SDK awaits before it sends
    const id = s.conn.tap.toolCallId((a) => a.ms === 300);
    s.conn.tap.deliver({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'wrong direction' },
    } as Msg);
    expect((await call).isError).toBeFalsy();
    expect(s.client.stats()).toMatchObject({ serverCancelsIgnored: 1, serverCancelsApplied: 0, cancelsSent: 0 });
  });

  it('ids collide across directions: each cancellation reaches only its own request, in both orders', async () => {
    const s = await start(kind);
    const nextClientId = () =>
      Math.max(
        ...s.conn.tap.sent.filter((m) => typeof m.id === 'number' && m.method !== undefined).map((m) => m.id as number),
      ) + 1;
    const nextServerId = () =>
      Math.max(
        -1,
        ...s.conn.tap.received
          .filter((m) => m.method !== undefined && typeof m.id === 'number')
          .map((m) => m.id as number),
      ) + 1;
    // Brings both sides' next request id to the same number: roots/list requests move the server's, pings the client's.
    const align = async () => {
      const gap = nextClientId() - nextServerId();
      if (gap >= 0) await s.client.callTool({ name: 'ask_roots', arguments: { times: gap + 1 } }); // the call itself uses one client id
      while (nextClientId() < nextServerId()) await s.client.sdk.ping();
      expect(nextClientId()).toBe(nextServerId());
      return nextClientId();
    };

    // Round 1: the client cancels its request N; the server's request N stays pending and is answered.
    let n = await align();
    const spin = new AbortController();
    const spinCall = s.client
      .callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1, round: 1 } }, { signal: spin.signal })
      .catch((e: unknown) => e);
    const ask = s.client.callTool({ name: 'ask_model', arguments: { prompt: 'round 1' } });
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    expect(s.conn.tap.toolCallId((a) => a.round === 1)).toBe(n);
    expect(s.sampling[0]!.ctx.requestId).toBe(n); // both directions have a request N in flight
    spin.abort('client cancels its own N');
    expect(await spinCall).toBeInstanceOf(CallAbortedError);
    await until(async () => (await stats(s)).cancelled === 1, 5000, 'spin cancelled');
    expect(s.sampling[0]!.ctx.signal.aborted).toBe(false);
    s.sampling[0]!.answer(modelSays('still here'));
    expect((await ask).content).toEqual([{ type: 'text', text: 'model said: still here' }]);

    // Round 2: the server cancels its request N (cascade from a cancelled ask_model); the client's request N runs on.
    n = await align();
    const model = new AbortController();
    const spinCall2 = s.client.callTool({ name: 'spin', arguments: { ms: 400, stageMs: 1, round: 2 } });
    const ask2 = s.client
      .callTool({ name: 'ask_model', arguments: { prompt: 'round 2' } }, { signal: model.signal })
      .catch((e: unknown) => e);
    await until(() => s.sampling.length === 2, 10_000, 'second sampling request');
    expect(s.conn.tap.toolCallId((a) => a.round === 2)).toBe(n);
    expect(s.sampling[1]!.ctx.requestId).toBe(n);
    model.abort('cancel the model call');
    expect(await ask2).toBeInstanceOf(CallAbortedError);
    await until(() => s.sampling[1]!.ctx.signal.aborted, 5000, 'server cancellation of its request N');
    expect(s.conn.tap.cancelsReceived().map((m) => m.params?.requestId)).toEqual([n]);
    expect((await spinCall2).isError).toBeFalsy(); // our request N was not touched

    const sentCancels = s.conn.tap.cancelsSent().map((m) => m.params?.requestId);
    expect(sentCancels).toEqual([
      s.conn.tap.toolCallId((a) => a.round === 1),
      s.conn.tap.toolCallId((a) => a.prompt === 'round 2'),
    ]);
    expect(s.client.stats()).toMatchObject({
      serverCancelsApplied: 1,
      serverCancelsIgnored: 0,
      lateResponsesIgnored: 0,
    });
    expect(await stats(s)).toMatchObject({ cancelled: 2, clientRequestsCancelled: 1 });
    expect(s.errors).toEqual([]);
  });
});

describe("the server's outbound requests, in memory", () => {
  it('closing the transport cancels the tool call and drops its pending request to the client', async () => {
    const s = await start('memory');
    const call = s.client.callTool({ name: 'ask_model', arguments: {} }).catch((e: unknown) => e);
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    const { executor, guard, errors } = s.conn.memory!;
    expect(guard.clientRequests.entries()).toHaveLength(1);
    await s.client.close();
    expect(await call).toMatchObject({ message: expect.stringMatching(/Connection closed/) });
    expect(s.sampling[0]!.ctx.signal.aborted).toBe(true); // the client side let go of it as well
    await until(() => executor.registry.size + guard.clientRequests.entries().length === 0, 5000, 'registry to empty');
    expect(executor.stats()).toMatchObject({ cancelled: 1, running: 0 });
    expect(errors).toEqual([]);
  });

  it('a cancelled request to the client is dropped after the TTL when no late answer comes', async () => {
    const s = await start('memory', { server: { cancelledTtlMs: 100 } });
    const controller = new AbortController();
    const call = s.client
      .callTool({ name: 'ask_model', arguments: {} }, { signal: controller.signal })
      .catch((e: unknown) => e);
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    controller.abort();
    await call;
    const { executor, guard } = s.conn.memory!;
    await until(() => executor.registry.inSession('inbound', 'memory').length === 0, 5000, 'job settled');
    expect(guard.clientRequests.entries().map((e) => e.state)).toEqual(['cancellationRequested']);
    await until(() => executor.registry.size + guard.clientRequests.entries().length === 0, 2000, 'TTL');
  });

  it('stopping an outbound entry the SDK does not know about cancels it towards the client and settles the SDK request', async () => {
    const s = await start('memory');
    const { server, executor, guard } = s.conn.memory!;
    // A request the server sends on its own, not from a tool: no job, no signal.
    const asked = server
      .createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 })
      .catch((e: unknown) => e);
    await until(() => s.sampling.length === 1, 5000, 'sampling request');
    const entry = guard.clientRequests.entries()[0]!;
    expect(entry).toMatchObject({ method: 'sampling/createMessage', relatedRequestId: undefined, state: 'pending' });
    expect(executor.callsInFlight('memory')).toBe(0); // no inbound job; the outbound entry is stopped
    guard.cancelAll('admin closed the session');
    expect(await asked).toMatchObject({ code: -32001 });
    expect(s.sampling[0]!.ctx.signal.reason).toBe('admin closed the session');
    expect(entry.stop('again')).toBe(false); // once only
    expect(s.conn.tap.cancelsReceived()).toHaveLength(1);
  });

  it('the server never sends a stale cancellation for a request the client already answered', async () => {
    const s = await start('memory');
    const { server } = s.conn.memory!;
    const controller = new AbortController();
    const roots = await server.listRoots(undefined, { signal: controller.signal });
    expect(roots.roots).toHaveLength(1);
    controller.abort('after the answer'); // SDK 1.x then sent notifications/cancelled (the guard stopped it); 2.x sends none
    await sleep(20);
    expect(s.conn.tap.cancelsReceived()).toEqual([]);
    expect(await stats(s)).toMatchObject({ staleClientCancelsSuppressed: 0, clientRequestsCancelled: 0 });
  });
});

// The server's own requests to the client travel differently over Streamable HTTP (on the POST's event
// stream, the client's answers on their own POSTs), so these run there too.
describe.each([...KINDS, 'http'] as Kind[])('requests from tools over %s', (kind) => {
  it('sampling, elicitation and roots from tools reach the handlers and their answers come back', async () => {
    const s = await start(kind);
    const model = s.client.callTool({ name: 'ask_model', arguments: { prompt: 'Say hi' } });
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    expect((s.sampling[0]!.params!.messages as { content: { text: string } }[])[0]!.content.text).toBe('Say hi');
    s.sampling[0]!.answer(modelSays('hi!'));
    expect((await model).content).toEqual([{ type: 'text', text: 'model said: hi!' }]);

    const name = s.client.callTool({ name: 'ask_name', arguments: {} });
    await until(() => s.elicitation.length === 1, 10_000, 'elicitation request');
    expect(s.elicitation[0]!.params!.message).toBe('What is your name?');
    s.elicitation[0]!.answer({ action: 'accept', content: { name: 'Ada' } });
    expect((await name).content).toEqual([{ type: 'text', text: 'hello, Ada' }]);

    expect((await s.client.callTool({ name: 'ask_roots', arguments: { times: 2 } })).content).toEqual([
      { type: 'text', text: 'client has 1 roots' },
    ]);
    // Answered requests left nothing to cancel: the finished tool calls sent no stale cancellations.
    expect(s.conn.tap.cancelsReceived()).toEqual([]);
    expect(await stats(s)).toMatchObject({
      completed: 3,
      clientRequestsCancelled: 0,
      staleClientCancelsSuppressed: 0,
      inFlight: 0,
    });
  });

  it('cascade: cancelling a tool call cancels its pending sampling request, seen by the client as notifications/cancelled for that id', async () => {
    const s = await start(kind);
    const controller = new AbortController();
    const call = s.client
      .callTool({ name: 'ask_model', arguments: {} }, { signal: controller.signal })
      .catch((e: unknown) => e);
    await until(() => s.sampling.length === 1, 10_000, 'sampling request');
    const pending = s.sampling[0]!;
    const samplingId = pending.ctx.requestId;
    expect(s.conn.tap.received.find((m) => m.method === 'sampling/createMessage')?.id).toBe(samplingId);
    const callId = s.conn.tap.toolCallId(() => true);
    expect(pending.ctx.signal.aborted).toBe(false);

    controller.abort('user closed the dialog');
    expect(await call).toBeInstanceOf(CallAbortedError);
    await until(() => pending.ctx.signal.aborted, 5000, 'the handler to see the cancellation');
    const cancels = s.conn.tap.cancelsReceived();
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.params).toEqual({
      requestId: samplingId,
      reason: `tool call ${JSON.stringify(callId)} stopped`,
    });
    expect(pending.ctx.signal.reason).toBe(`tool call ${JSON.stringify(callId)} stopped`);

    // The handler returned after the cancel: its answer never went out.
    await sleep(100);
    expect(s.conn.tap.sent.filter((m) => m.id === samplingId && m.method === undefined)).toEqual([]);
    expect(s.client.stats()).toMatchObject({ serverCancelsApplied: 1, serverCancelsIgnored: 0 });
    const server = await stats(s);
    expect(server).toMatchObject({ cancelled: 1, clientRequestsCancelled: 1, staleClientCancelsSuppressed: 0 });
    expect(s.errors).toEqual([]);
  });
});
