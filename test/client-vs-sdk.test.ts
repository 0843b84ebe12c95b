/**
 * The plain SDK `Client` (1.32) next to `CancelAwareClient`, against this
 * server over stdio and in memory. Each test backs one row of the table in
 * docs/client.md and shows both behaviours side by side.
 *
 * The plain-SDK half of each test is a characterisation of @modelcontextprotocol/sdk 1.32 (pinned in
 * package.json), not a requirement: it records what that version does. When the SDK is upgraded and one
 * of those assertions fails, the SDK changed; update the row of docs/client.md with it.
 */
import { readFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ErrorCode,
  McpError,
  type CreateMessageResult,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { CallAbortedError, CancelAwareClient, ClientGuard } from '../dist/src/client/index.js';
import { KINDS, openConnection, serverStats, type Connection, type Kind } from './client-helpers.js';
import { sleep, until } from './helpers.js';

const info = { name: 'test', version: '1.0.0' };
const spin = (ms: number, tag?: unknown) => ({
  name: 'spin',
  arguments: { ms, stageMs: 1, ...(tag !== undefined && { tag }) },
});

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  cleanup = [];
});

async function connection(kind: Kind): Promise<Connection> {
  const conn = await openConnection(kind);
  cleanup.push(() => conn.dispose());
  return conn;
}

/** A plain SDK client on a tapped connection, recording what it reports through onerror. */
async function plain(
  kind: Kind,
  capabilities: Record<string, unknown> = {},
  setup?: (c: Client) => void,
): Promise<{ client: Client; conn: Connection; errors: Error[] }> {
  const conn = await connection(kind);
  const client = new Client(info, { capabilities });
  setup?.(client);
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(conn.tap);
  cleanup.push(() => client.close());
  return { client, conn, errors };
}

async function ours(
  kind: Kind,
  setup?: (c: CancelAwareClient) => void,
  ttlMs?: number,
): Promise<{ client: CancelAwareClient; conn: Connection; errors: Error[] }> {
  const conn = await connection(kind);
  // The 2025-11-25 era, the one SDK 1.32 speaks (our server speaks both).
  const client = new CancelAwareClient(info, {
    versionNegotiation: { mode: 'legacy' },
    ...(ttlMs !== undefined && { cancelledTtlMs: ttlMs }),
  });
  setup?.(client);
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(conn.tap);
  cleanup.push(() => client.close());
  return { client, conn, errors };
}

const isToolResult = (m: { result?: Record<string, unknown> }) => m.result !== undefined && 'content' in m.result;

it('characterises @modelcontextprotocol/sdk 1.32: the version these plain-SDK rows describe', () => {
  const sdk = JSON.parse(
    readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  expect(sdk.version).toMatch(/^1\.32\./);
});

describe.each(KINDS)('plain SDK Client (characterisation of SDK 1.32) vs CancelAwareClient over %s', (kind) => {
  it('row "stale cancellation after completion": the SDK sends notifications/cancelled for a finished request; ours sends nothing', async () => {
    const sdk = await plain(kind);
    const a = new AbortController();
    await sdk.client.callTool(spin(1), undefined, { signal: a.signal });
    const id = sdk.conn.tap.toolCallId(() => true);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1); // the SDK never removes its listener
    a.abort('after the fact');
    expect(sdk.conn.tap.cancelsSent()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'after the fact' } },
    ]);

    const mine = await ours(kind);
    const b = new AbortController();
    await mine.client.callTool(spin(1), { signal: b.signal });
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    b.abort('after the fact');
    await sleep(50);
    expect(mine.conn.tap.cancelsSent()).toEqual([]);
  });

  it('row "late response after cancel": the SDK reports "unknown message ID" through onerror; ours absorbs it and counts it', async () => {
    const sdk = await plain(kind);
    sdk.conn.tap.hold(isToolResult);
    const a = new AbortController();
    const call = sdk.client.callTool(spin(30), undefined, { signal: a.signal }).catch((e: unknown) => e);
    await until(() => sdk.conn.tap.held.length === 1, 10_000, 'response on its way');
    a.abort('raced');
    await call;
    sdk.conn.tap.release();
    await until(() => sdk.errors.length > 0, 2000, 'SDK error');
    expect(sdk.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Received a response for an unknown message ID/),
    ]);

    const mine = await ours(kind);
    mine.conn.tap.hold(isToolResult);
    const b = new AbortController();
    const call2 = mine.client.callTool(spin(30), { signal: b.signal }).catch((e: unknown) => e);
    await until(() => mine.conn.tap.held.length === 1, 10_000, 'response on its way');
    b.abort('raced');
    await call2;
    mine.conn.tap.release();
    await sleep(100);
    expect(mine.errors).toEqual([]);
    expect(mine.client.stats().lateResponsesIgnored).toBe(1);
  });

  it('row "cancel of initialize": the SDK cancels initialize when connect\'s signal aborts; ours closes the connection and sends no cancellation', async () => {
    const sdkConn = await connection(kind);
    const sdkClient = new Client(info);
    sdkConn.tap.hold((m) => m.result !== undefined && 'protocolVersion' in m.result);
    const a = new AbortController();
    const connecting = sdkClient.connect(sdkConn.tap, { signal: a.signal }).catch((e: unknown) => e);
    await until(() => sdkConn.tap.held.length === 1, 30_000, 'initialize answer on its way'); // the server starts first: seconds on a busy machine
    a.abort('gave up');
    expect(await connecting).toBeInstanceOf(McpError);
    const initId = sdkConn.tap.sent.find((m) => m.method === 'initialize')!.id;
    expect(sdkConn.tap.cancelsSent()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: initId, reason: 'gave up' } },
    ]);

    const conn = await connection(kind);
    const client = new CancelAwareClient(info, { versionNegotiation: { mode: 'legacy' } });
    conn.tap.hold((m) => m.result !== undefined && 'protocolVersion' in m.result);
    const b = new AbortController();
    const connecting2 = client.connect(conn.tap, { signal: b.signal }).catch((e: unknown) => e);
    await until(() => conn.tap.held.length === 1, 30_000, 'initialize answer on its way');
    b.abort('gave up');
    expect(await connecting2).toBeInstanceOf(CallAbortedError);
    expect(conn.tap.cancelsSent()).toEqual([]);
  });

  it('row "abort error type": the SDK rejects with McpError(RequestTimeout, reason); ours with an AbortError / TimeoutError', async () => {
    const sdk = await plain(kind);
    const a = new AbortController();
    const call = sdk.client.callTool(spin(20_000), undefined, { signal: a.signal }).catch((e: unknown) => e);
    await sleep(50);
    a.abort('user stop');
    const sdkError = (await call) as McpError;
    expect(sdkError).toBeInstanceOf(McpError);
    expect(sdkError.code).toBe(ErrorCode.RequestTimeout); // -32001, although nothing timed out
    expect(sdkError.message).toBe('MCP error -32001: user stop');
    expect(sdkError.name).toBe('McpError');

    const mine = await ours(kind);
    const b = new AbortController();
    const call2 = mine.client.callTool(spin(20_000), { signal: b.signal }).catch((e: unknown) => e);
    await sleep(50);
    b.abort('user stop');
    const error = (await call2) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error).toMatchObject({ name: 'AbortError', reason: 'user stop', cancelSent: true });
    const timedOut = (await mine.client
      .callTool(spin(20_000), { timeout: 50 })
      .catch((e: unknown) => e)) as CallAbortedError;
    expect(timedOut.name).toBe('TimeoutError');
  });

  it('row "memory of cancelled entries": the SDK keeps a listener per call on a shared signal and later cancels them all; ours keeps nothing past the TTL', async () => {
    const n = 20;
    const sdk = await plain(kind);
    const app = new AbortController(); // e.g. one "shutdown" signal for the whole application
    for (let i = 0; i < n; i++) await sdk.client.callTool(spin(1, i), undefined, { signal: app.signal });
    expect(getEventListeners(app.signal, 'abort')).toHaveLength(n);
    app.abort('shutting down');
    expect(sdk.conn.tap.cancelsSent()).toHaveLength(n); // n stale cancellations for n finished requests

    const mine = await ours(kind, undefined, 100);
    const app2 = new AbortController();
    for (let i = 0; i < n; i++) await mine.client.callTool(spin(1, i), { signal: app2.signal });
    expect(getEventListeners(app2.signal, 'abort')).toHaveLength(0);
    const pending = Array.from({ length: n }, (_, i) =>
      mine.client.callTool(spin(20_000, `long-${i}`), { signal: app2.signal }).catch((e: unknown) => e),
    );
    // SDK 2.x awaits before it sends: abort once all n are on the wire (one aborted earlier never leaves at all).
    await until(
      () =>
        mine.conn.tap.sent.filter(
          (m) =>
            m.method === 'tools/call' &&
            String((m.params?.arguments as { tag?: unknown } | undefined)?.tag).startsWith('long-'),
        ).length === n,
      5000,
      'the calls to leave',
    );
    app2.abort('shutting down');
    await Promise.all(pending);
    expect(mine.conn.tap.cancelsSent()).toHaveLength(n); // one per pending request, none for the finished ones
    expect(mine.client.registry.size).toBe(n); // cancelled entries wait for a late response …
    await until(() => mine.client.registry.size === 0, 2000, 'TTL'); // … for a bounded time
  });

  it('row "server cancels its request 0": the SDK ignores it and answers anyway; ours aborts the handler and sends nothing', async () => {
    // The server numbers its requests from 0, so the first sampling request of the connection has id 0.
    const seen: { id: RequestId; signal: AbortSignal; answer: (r: CreateMessageResult) => void }[] = [];
    const answer: CreateMessageResult = { model: 'm', role: 'assistant', content: { type: 'text', text: 'hi' } };
    const sdk = await plain(kind, { sampling: {} }, (c) =>
      c.setRequestHandler(
        CreateMessageRequestSchema,
        (_req, extra) =>
          new Promise((resolve) => seen.push({ id: extra.requestId, signal: extra.signal, answer: resolve })),
      ),
    );
    const a = new AbortController();
    const call = sdk.client
      .callTool({ name: 'ask_model', arguments: {} }, undefined, { signal: a.signal })
      .catch((e: unknown) => e);
    await until(() => seen.length === 1, 10_000, 'sampling request');
    expect(seen[0]!.id).toBe(0);
    a.abort('stop');
    await call;
    await until(() => sdk.conn.tap.cancelsReceived().length === 1, 5000, 'server cancellation');
    expect(sdk.conn.tap.cancelsReceived()[0]!.params?.requestId).toBe(0);
    await sleep(50);
    expect(seen[0]!.signal.aborted).toBe(false); // the SDK's `if (!requestId) return` skips id 0
    seen[0]!.answer(answer);
    await until(() => sdk.conn.tap.sent.some((m) => m.id === 0 && m.method === undefined), 2000, 'the SDK to answer');
    await until(
      async () => (await serverStats(sdk.client)).lateClientResponsesIgnored === 1,
      5000,
      'the server to absorb it',
    );

    let signal: AbortSignal | undefined;
    const mine = await ours(kind, (c) =>
      c.onSampling(
        (_params, ctx) =>
          new Promise((resolve) => {
            signal = ctx.signal;
            ctx.signal.addEventListener('abort', () => resolve(answer));
          }),
      ),
    );
    const b = new AbortController();
    const call2 = mine.client
      .callTool({ name: 'ask_model', arguments: {} }, { signal: b.signal })
      .catch((e: unknown) => e);
    await until(() => signal !== undefined, 10_000, 'sampling request');
    b.abort('stop');
    await call2;
    await until(() => signal!.aborted, 5000, 'handler aborted');
    await sleep(50);
    expect(mine.conn.tap.sent.filter((m) => m.id === 0 && m.method === undefined)).toEqual([]);
    // SDK 2.x under our client no longer skips id 0 either, so it drops the answer itself; the guard would have (responsesDropped).
    expect(mine.client.stats()).toMatchObject({ serverCancelsApplied: 1 });
    expect(await serverStats(mine.client.sdk)).toMatchObject({
      lateClientResponsesIgnored: 0,
      clientRequestsCancelled: 1,
    });
  });

  it('ClientGuard alone under a plain SDK Client removes the stale cancellation and the late-response error', async () => {
    const conn = await connection(kind);
    const guard = new ClientGuard(conn.tap);
    const client = new Client(info);
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    await client.connect(guard);
    cleanup.push(() => client.close());

    const a = new AbortController();
    await client.callTool(spin(1), undefined, { signal: a.signal });
    a.abort('after the fact');
    conn.tap.hold(isToolResult);
    const b = new AbortController();
    const call = client.callTool(spin(30), undefined, { signal: b.signal }).catch((e: unknown) => e);
    await until(() => conn.tap.held.length === 1, 10_000, 'response on its way');
    b.abort('raced');
    await call;
    conn.tap.release();
    await sleep(100);
    expect(conn.tap.cancelsSent().map((m) => m.params?.reason)).toEqual(['raced']);
    expect(errors).toEqual([]);
    expect(guard.stats).toMatchObject({ cancelsSent: 1, staleCancelsSuppressed: 1, lateResponsesIgnored: 1 });
  });
});
