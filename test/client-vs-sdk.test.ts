/**
 * The plain SDK `Client` (SDK 2.x, `@modelcontextprotocol/client`, the line
 * `CancelAwareClient` stands on) next to `CancelAwareClient`, against this
 * server over stdio and in memory, in the 2025-11-25 era. Each test backs one
 * row of the table in docs/client.md and shows both behaviours side by side.
 *
 * The plain-SDK half of each test is a characterisation of @modelcontextprotocol/client 2.4 (pinned in
 * package.json), not a requirement: it records what that version does. When the SDK is upgraded and one
 * of those assertions fails, the SDK changed; update the row of docs/client.md with it.
 */
import { readFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, SdkError, SdkErrorCode, type CreateMessageResult } from '@modelcontextprotocol/client';
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
  // The 2025-11-25 era, as for ours below: the rows are about notifications/cancelled, which both eras send over stdio.
  const client = new Client(info, { capabilities, versionNegotiation: { mode: 'legacy' } });
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
  // The 2025-11-25 era, as for the plain client (our server speaks both).
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

it('characterises @modelcontextprotocol/client 2.4: the version these plain-SDK rows describe', () => {
  const sdk = JSON.parse(
    readFileSync(new URL('../node_modules/@modelcontextprotocol/client/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  expect(sdk.version).toMatch(/^2\.4\./);
});

describe.each(KINDS)('plain SDK Client (characterisation of SDK 2.4) vs CancelAwareClient over %s', (kind) => {
  it('row "stale cancellation after completion": neither sends notifications/cancelled for a finished request, and both remove their listener', async () => {
    const sdk = await plain(kind);
    const a = new AbortController();
    await sdk.client.callTool(spin(1), { signal: a.signal });
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    a.abort('after the fact');

    const mine = await ours(kind);
    const b = new AbortController();
    await mine.client.callTool(spin(1), { signal: b.signal });
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    b.abort('after the fact');
    await sleep(50);
    expect(sdk.conn.tap.cancelsSent()).toEqual([]);
    expect(mine.conn.tap.cancelsSent()).toEqual([]);
  });

  it('row "late response after cancel": the SDK reports "unknown message ID" through onerror; ours absorbs it and counts it', async () => {
    const sdk = await plain(kind);
    sdk.conn.tap.hold(isToolResult);
    const a = new AbortController();
    const call = sdk.client.callTool(spin(30), { signal: a.signal }).catch((e: unknown) => e);
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

  it('row "cancel of initialize": neither cancels initialize, both close the connection; the SDK rejects with SdkError(REQUEST_TIMEOUT), ours with CallAbortedError', async () => {
    const sdkConn = await connection(kind);
    const sdkClient = new Client(info, { versionNegotiation: { mode: 'legacy' } });
    cleanup.push(() => sdkClient.close());
    let sdkClosed = false;
    sdkClient.onclose = () => (sdkClosed = true);
    sdkConn.tap.hold((m) => m.result !== undefined && 'protocolVersion' in m.result);
    const a = new AbortController();
    const connecting = sdkClient.connect(sdkConn.tap, { signal: a.signal }).catch((e: unknown) => e);
    await until(() => sdkConn.tap.held.length === 1, 30_000, 'initialize answer on its way'); // the server starts first: seconds on a busy machine
    a.abort('gave up');
    const sdkError = await connecting;
    expect(sdkError).toBeInstanceOf(SdkError);
    expect((sdkError as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
    expect(sdkConn.tap.cancelsSent()).toEqual([]);
    await until(() => sdkClosed, 5000, "the SDK's connection to close");

    const conn = await connection(kind);
    const client = new CancelAwareClient(info, { versionNegotiation: { mode: 'legacy' } });
    let closed = false;
    client.sdk.onclose = () => (closed = true);
    conn.tap.hold((m) => m.result !== undefined && 'protocolVersion' in m.result);
    const b = new AbortController();
    const connecting2 = client.connect(conn.tap, { signal: b.signal }).catch((e: unknown) => e);
    await until(() => conn.tap.held.length === 1, 30_000, 'initialize answer on its way');
    b.abort('gave up');
    expect(await connecting2).toBeInstanceOf(CallAbortedError);
    expect(conn.tap.cancelsSent()).toEqual([]);
    await until(() => closed, 5000, 'our connection to close');
  });

  it('row "abort error type": the SDK rejects with SdkError(REQUEST_TIMEOUT, reason); ours with an AbortError / TimeoutError', async () => {
    const sdk = await plain(kind);
    const a = new AbortController();
    const call = sdk.client.callTool(spin(20_000), { signal: a.signal }).catch((e: unknown) => e);
    await sleep(50);
    a.abort('user stop');
    const sdkError = (await call) as SdkError;
    expect(sdkError).toBeInstanceOf(SdkError);
    expect(sdkError.code).toBe(SdkErrorCode.RequestTimeout); // although nothing timed out
    expect(sdkError.message).toBe('user stop');
    expect(sdkError.name).toBe('SdkError');

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

  it('row "memory of cancelled entries": the SDK forgets a cancelled call at once, so its late answer is an error; ours keeps it until its answer or the TTL', async () => {
    const n = 20;
    const sdk = await plain(kind);
    const app = new AbortController(); // e.g. one "shutdown" signal for the whole application
    for (let i = 0; i < n; i++) await sdk.client.callTool(spin(1, i), { signal: app.signal });
    expect(getEventListeners(app.signal, 'abort')).toHaveLength(0);
    sdk.conn.tap.hold(isToolResult);
    const late = sdk.client.callTool(spin(30, 'late'), { signal: app.signal }).catch((e: unknown) => e);
    await until(() => sdk.conn.tap.held.length === 1, 10_000, 'response on its way');
    app.abort('shutting down');
    await late;
    expect(sdk.conn.tap.cancelsSent()).toHaveLength(1); // the pending call only
    sdk.conn.tap.release();
    await until(() => sdk.errors.length > 0, 2000, 'SDK error');
    expect(sdk.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Received a response for an unknown message ID/),
    ]);

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

  it('row "server cancels its request 0": both abort the handler and send no answer', async () => {
    // The server numbers its requests from 0, so the first sampling request of the connection has id 0.
    const seen: { id: unknown; signal: AbortSignal; answer: (r: CreateMessageResult) => void }[] = [];
    const answer: CreateMessageResult = { model: 'm', role: 'assistant', content: { type: 'text', text: 'hi' } };
    const sdk = await plain(kind, { sampling: {} }, (c) =>
      c.setRequestHandler(
        'sampling/createMessage',
        (_req, ctx) =>
          new Promise((resolve) => seen.push({ id: ctx.mcpReq.id, signal: ctx.mcpReq.signal, answer: resolve })),
      ),
    );
    const a = new AbortController();
    const call = sdk.client
      .callTool({ name: 'ask_model', arguments: {} }, { signal: a.signal })
      .catch((e: unknown) => e);
    await until(() => seen.length === 1, 10_000, 'sampling request');
    expect(seen[0]!.id).toBe(0);
    a.abort('stop');
    await call;
    await until(() => sdk.conn.tap.cancelsReceived().length === 1, 5000, 'server cancellation');
    expect(sdk.conn.tap.cancelsReceived()[0]!.params?.requestId).toBe(0);
    await until(() => seen[0]!.signal.aborted, 5000, 'the SDK to abort the handler'); // 1.32 skipped id 0 (`if (!requestId)`)
    seen[0]!.answer(answer);
    await sleep(50);
    expect(sdk.conn.tap.sent.filter((m) => m.id === 0 && m.method === undefined)).toEqual([]);

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
    expect(mine.client.stats()).toMatchObject({ serverCancelsApplied: 1 });
    for (const client of [sdk.client, mine.client.sdk])
      expect(await serverStats(client)).toMatchObject({ lateClientResponsesIgnored: 0, clientRequestsCancelled: 1 });
  });

  it('ClientGuard alone under a plain SDK Client removes the late-response error', async () => {
    const conn = await connection(kind);
    const guard = new ClientGuard(conn.tap);
    const client = new Client(info, { versionNegotiation: { mode: 'legacy' } });
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    await client.connect(guard);
    cleanup.push(() => client.close());

    conn.tap.hold(isToolResult);
    const b = new AbortController();
    const call = client.callTool(spin(30), { signal: b.signal }).catch((e: unknown) => e);
    await until(() => conn.tap.held.length === 1, 10_000, 'response on its way');
    b.abort('raced');
    await call;
    conn.tap.release();
    await sleep(100);
    expect(conn.tap.cancelsSent().map((m) => m.params?.reason)).toEqual(['raced']);
    expect(errors).toEqual([]);
    expect(guard.stats).toMatchObject({ cancelsSent: 1, lateResponsesIgnored: 1 });
  });
});
