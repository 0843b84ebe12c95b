/**
 * Issue 64, defect 7: one OAuth caller cannot hold every session. The session limit applies per caller first (a
 * quarter of --max-sessions by default, or --max-sessions-per-caller), then in total, and the 503 names which limit.
 * Real oidc-provider tokens of two clients against the server as a subprocess.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, postAs, startAuthServer, type AuthServer } from './auth-helpers.js';
import { initializeBody } from './http-helpers.js';
import { startIssuer, type TestIssuer } from './oidc-helpers.js';

let op: TestIssuer;
let server: AuthServer;
beforeAll(async () => {
  op = await startIssuer();
  server = await startAuthServer(op.issuer, ['--max-sessions', '8']);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await op?.stop();
});

describe('sessions per caller (issue 64)', () => {
  it("a caller holding its share (a quarter of --max-sessions) gets 503 naming the per-caller limit; another caller's initialize still succeeds", async () => {
    const alice = await op.token('alice', server.url.href);
    const bob = await op.token('bob', server.url.href);
    for (let i = 0; i < 2; i++) await openSession(server.url, alice);
    const refused = await postAs(server.url, alice, initializeBody('third'));
    expect(refused.status).toBe(503);
    expect(refused.messages[0]).toMatchObject({
      id: 'third',
      error: {
        code: -32000,
        message: expect.stringMatching(/session limit of this caller reached: 2 .*--max-sessions-per-caller/),
      },
    });
    expect((await postAs(server.url, bob, initializeBody())).status).toBe(200);
  });
});
