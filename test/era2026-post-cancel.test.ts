/**
 * A 2026-07-28 `notifications/cancelled` sent by POST (src/transport/http/post-cancel.ts): the revision cancels over
 * HTTP by closing the response stream, and the SDK 2.x client POSTs the notification only behind a wrapping
 * transport. Honoured for an OAuth caller naming exactly one of its own requests in flight, by closing that call's
 * stream; refused with 400 and a warn line (once a minute) otherwise, and the call it named runs on and is answered.
 * Real servers as subprocesses, a real authorization server, raw HTTP on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postAs, startAuthServer, type Answer, type AuthServer } from './auth-helpers.js';
import { startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { envelope, modernRequest } from './modern-helpers.js';
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
});
