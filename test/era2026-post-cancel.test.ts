/**
 * A 2026-07-28 `notifications/cancelled` sent by POST (src/transport/http/post-cancel.ts): the revision cancels over
 * HTTP by closing the response stream, and the SDK 2.x client POSTs the notification only behind a wrapping
 * transport. Honoured for an OAuth caller naming exactly one of its own requests in flight, by closing that call's
 * stream; refused with 400 and a warn line (once a minute) otherwise, and the call it named runs on and is answered.
 * Real servers as subprocesses, a real authorization server, raw HTTP on 127.0.0.1, and the real SDK 2.4 client behind
 * a wrapping transport (the case in which it POSTs its cancel).
 */
import {
  Client,
  SdkError,
  StreamableHTTPClientTransport,
  type JSONRPCMessage,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postAs, startAuthServer, type Answer, type AuthServer } from './auth-helpers.js';
import { startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { envelope, MODERN, modernRequest } from './modern-helpers.js';
import { startIssuer, type TestIssuer } from './oidc-helpers.js';

const REFUSED =
  'a 2026-07-28 request is cancelled by closing its response stream; notifications/cancelled by POST is honoured only for an authenticated caller whose requestId names exactly one of its own requests in flight';

const cancelBody = (requestId: unknown) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'the user pressed Stop', _meta: envelope() },
});
const spinCall = (id: number, ms: number) =>
  modernRequest(id, 'tools/call', { name: 'spin', arguments: { ms, stageMs: 1 } });
async function stats(url: URL, token: string | undefined): Promise<Record<string, number>> {
  const r = await postAs(url, token, modernRequest(`s${Math.random()}`, 'resources/read', { uri: 'executor://stats' }));
  const result = r.messages[0]?.result as { contents: { text: string }[] };
  return JSON.parse(result.contents[0]!.text) as Record<string, number>;
}
/**
 * A transport wrapped the way a logging tap or a proxy wraps one: everything passes through, but it does not say
 * `hasPerRequestStream`, so the SDK 2.x client cancels a 2026 call by POSTing notifications/cancelled.
 */
class WrappingTap implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sent: JSONRPCMessage[] = [];
  constructor(private readonly inner: StreamableHTTPClientTransport) {}
  async start(): Promise<void> {
    this.inner.onmessage = (m) => this.onmessage?.(m);
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push(message);
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}

/** The SDK 2.4 client pinned to 2026-07-28 behind a {@link WrappingTap}, with `token` if given; errors it reports collected. */
async function wrappedClient(url: URL, token: string | undefined) {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const tap = new WrappingTap(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  const client = new Client(
    { name: 'wrapped-sdk', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(tap);
  const cancels = () =>
    tap.sent.flatMap((m) =>
      'method' in m && m.method === 'notifications/cancelled' ? [m.params as { requestId: unknown }] : [],
    );
  const callIds = () =>
    tap.sent.flatMap((m) => ('method' in m && m.method === 'tools/call' && 'id' in m ? [m.id] : []));
  return { client, errors, cancels, callIds };
}

const refusal = (a: Answer) => JSON.parse(a.text) as { id: unknown; error: { code: number; message: string } };

describe('with OAuth: each caller cancels its own call by POST, nobody else can', () => {
  let idp: TestIssuer;
  let server: AuthServer;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    idp = await startIssuer();
    server = await startAuthServer(idp.issuer);
    alice = await idp.token('alice', server.url.href);
    bob = await idp.token('bob', server.url.href);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.stop();
  });

  it("bob's cancel of alice's id is refused; alice's closes her call's stream, unanswered, and the work stops", async () => {
    const before = await stats(server.url, alice);
    const call = postAs(server.url, alice, spinCall(7, 120_000)).catch((e: Error) => e);
    await until(async () => (await stats(server.url, alice)).running === 1, 30_000, "alice's spin running");

    const theirs = await postAs(server.url, bob, cancelBody(7));
    expect(theirs.status).toBe(400);
    expect(refusal(theirs)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: REFUSED } });
    expect((await stats(server.url, alice)).running).toBe(1);
    expect(server.stderr()).toMatch(
      /warn: refused a 2026 notifications\/cancelled sent by POST \(the caller has 0 requests in flight with that id\)/,
    );

    const mine = await postAs(server.url, alice, cancelBody(7));
    expect(mine.status).toBe(202);
    const outcome = await call;
    // The stream closed without the call's answer: either fetch saw the cut, or the body it read holds no result.
    if (!(outcome instanceof Error)) expect(outcome.messages.filter((m) => 'result' in m || 'error' in m)).toEqual([]);
    await until(async () => (await stats(server.url, alice)).running === 0, 30_000, 'the spin stopped');
    expect((await stats(server.url, alice)).cancelled).toBe(before.cancelled! + 1);
  });

  it("the SDK 2.4 client behind a wrapping transport: its POSTed cancel closes the caller's own call, and the work stops", async () => {
    const sdk = await wrappedClient(server.url, alice);
    try {
      const before = await stats(server.url, alice);
      const stop = new AbortController();
      const call = sdk.client
        .callTool({ name: 'spin', arguments: { ms: 120_000, stageMs: 1 } }, { signal: stop.signal })
        .catch((e: unknown) => e);
      await until(async () => (await stats(server.url, alice)).running === 1, 30_000, 'the spin running');
      stop.abort('the user pressed Stop');
      expect(await call).toBeInstanceOf(SdkError);
      // The SDK cancelled by POST (no per-request stream to close), naming the call it sent.
      await until(() => sdk.cancels().length === 1, 10_000, 'the cancel POST');
      expect(sdk.cancels()[0]!.requestId).toBe(sdk.callIds()[0]);
      await until(async () => (await stats(server.url, alice)).running === 0, 30_000, 'the spin stopped');
      const after = await stats(server.url, alice);
      expect(after.cancelled).toBe(before.cancelled! + 1);
      expect(after.completed).toBe(before.completed);
      // The call had rejected already; the SDK's reader of the stream the server cut reports the cut, and nothing else.
      expect(sdk.errors.map((e) => e.message)).toEqual(sdk.errors.length ? ['fetch failed'] : []);
    } finally {
      await sdk.client.close();
    }
  });

  it('an id with nothing in flight, or one that is no id, is refused', async () => {
    for (const id of [99, { not: 'an id' }]) {
      const r = await postAs(server.url, alice, cancelBody(id));
      expect(r.status).toBe(400);
      expect(refusal(r).error.message).toBe(REFUSED);
    }
  });
});

describe('without authentication every client is the same caller: no POST cancel is honoured', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpServer(['--threads', '1']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refused with 400 and one warn line a minute; the call it named runs on and is answered', async () => {
    const call = postAs(server.url, undefined, spinCall(8, 1500));
    await until(async () => (await stats(server.url, undefined)).running === 1, 30_000, 'the spin running');
    for (let i = 0; i < 3; i++) {
      const r = await postAs(server.url, undefined, cancelBody(8));
      expect(r.status).toBe(400);
      expect(refusal(r).error.message).toBe(REFUSED);
    }
    const answered = await call;
    expect(answered.messages.find((m) => m.id === 8)?.result).toMatchObject({
      content: [{ type: 'text', text: expect.stringMatching(/^spun 1500 slices/) as unknown }],
    });
    const warns = server.stderr().match(/warn: refused a 2026 notifications\/cancelled sent by POST/g) ?? [];
    expect(warns).toHaveLength(1);
    expect(server.stderr()).toContain('(the server has no per-caller authentication (--auth-issuer))');
  });

  it('the SDK 2.4 client behind a wrapping transport: its POSTed cancel is refused, the SDK reports the 400, and the call runs to its end', async () => {
    const sdk = await wrappedClient(server.url, undefined);
    try {
      const before = await stats(server.url, undefined);
      const stop = new AbortController();
      const call = sdk.client
        .callTool({ name: 'spin', arguments: { ms: 1500, stageMs: 1 } }, { signal: stop.signal })
        .catch((e: unknown) => e);
      await until(async () => (await stats(server.url, undefined)).running === 1, 30_000, 'the spin running');
      stop.abort('the user pressed Stop');
      expect(await call).toBeInstanceOf(SdkError);
      // The SDK shows the server's JSON-RPC error twice through onerror, as its transport's and as the failed cancel (the
      // aborted call itself rejected already).
      const posted = `Error POSTing to endpoint: ${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: REFUSED } })}`;
      await until(() => sdk.errors.length === 2, 10_000, 'both reports');
      expect(sdk.errors.map((e) => e.message)).toEqual([
        posted,
        `Failed to send cancellation: SdkHttpError: ${posted}`,
      ]);
      await until(
        async () => (await stats(server.url, undefined)).completed === before.completed! + 1,
        30_000,
        'the spin to finish',
      );
      expect((await stats(server.url, undefined)).cancelled).toBe(before.cancelled);
    } finally {
      await sdk.client.close();
    }
  });
});
