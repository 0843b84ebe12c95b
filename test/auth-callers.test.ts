/**
 * Issue 54: one identity per caller. With OAuth, the caller is (iss, sub,
 * client id): it owns the 2025 sessions it opens and the 2026 tasks and
 * parked calls it creates, and the per-caller task limit counts its tasks
 * alone. Two clients of one issuer, alice and bob, as real HTTP traffic to
 * the server as a subprocess: neither sees, answers nor cancels the other's.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSession, oauthClient, openSession, postAs, startAuthServer, type AuthServer } from './auth-helpers.js';
import { modernRequest, TASKS } from './modern-helpers.js';
import { startIssuer, type TestIssuer } from './oidc-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const ASKABLE = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } } };

let idp: TestIssuer;
let server: AuthServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  idp = await startIssuer();
  server = await startAuthServer(idp.issuer, ['--tools', MRTR_TOOLS, '--max-working-tasks-per-session', '2']);
  alice = await idp.token('alice', server.url.href);
  bob = await idp.token('bob', server.url.href);
});
afterAll(async () => {
  await server?.stop();
  await idp?.stop();
});

const result = (a: { messages: { result?: unknown }[] }) => a.messages[0]?.result as Record<string, unknown>;
const error = (a: { messages: { error?: unknown }[] }) =>
  a.messages[0]?.error as { code: number; message: string } | undefined;
/** A 2026 task of `task_spin` for `token`, spinning long enough to still be working while the test looks at it. */
async function longTask(token: string, id: string): Promise<string> {
  const created = await postAs(
    server.url,
    token,
    modernRequest(id, 'tools/call', { name: 'task_spin', arguments: { ms: 120_000 } }, { tasks: true }),
  );
  expect(result(created)).toMatchObject({ resultType: 'task', status: 'working' });
  return result(created).taskId as string;
}
const tasksRequest = (token: string, id: string, method: string, params: Record<string, unknown>) =>
  postAs(server.url, token, modernRequest(id, method, params, { tasks: true }));

describe('2025-11-25: a session belongs to the caller that opened it', () => {
  it('another caller that presents its id gets 404 unknown session for POST, GET and DELETE; the owner goes on using it', async () => {
    const sid = await openSession(server.url, alice);
    const list = { jsonrpc: '2.0', id: 'l', method: 'tools/list' };
    const theirs = await inSession(server.url, bob, sid, list);
    expect(theirs.status).toBe(404);
    expect(error(theirs)?.message).toMatch(/unknown or expired session/);
    // A task-augmented call and a cancel in it: neither reaches the session.
    expect(
      (
        await inSession(server.url, bob, sid, {
          jsonrpc: '2.0',
          id: 't',
          method: 'tools/call',
          params: { name: 'task_spin', arguments: { ms: 1 }, task: {} },
        })
      ).status,
    ).toBe(404);
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(server.url, {
        method,
        headers: {
          authorization: `Bearer ${bob}`,
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-06-18',
          accept: 'text/event-stream',
        },
      });
      expect(r.status, method).toBe(404);
      await r.body?.cancel();
    }
    const ours = await inSession(server.url, alice, sid, list);
    expect(ours.status).toBe(200);
    expect(result(ours)).toHaveProperty('tools');
  });

  it("a 2025 task of alice's session is not found from bob's own session", async () => {
    const sid = await openSession(server.url, alice);
    const created = await inSession(server.url, alice, sid, {
      jsonrpc: '2.0',
      id: 't',
      method: 'tools/call',
      params: { name: 'task_spin', arguments: { ms: 1 }, task: {} },
    });
    const taskId = (result(created).task as { taskId: string }).taskId;
    const own = await openSession(server.url, bob);
    expect(
      error(
        await inSession(server.url, bob, own, { jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { taskId } }),
      ),
    ).toMatchObject({ code: -32602 });
    expect(
      result(
        await inSession(server.url, alice, sid, { jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { taskId } }),
      ),
    ).toMatchObject({ taskId });
  });
});

describe('2026-07-28: tasks and parked calls belong to the caller', () => {
  it('bob can neither get, update nor cancel a task of alice (not found, as an unknown id); alice can, and her cancel stops it', async () => {
    const taskId = await longTask(alice, 'a1');
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/cancel', { taskId }],
      ['tasks/update', { taskId, inputResponses: { x: { action: 'decline' } } }],
    ] as const) {
      const e = error(await tasksRequest(bob, `b-${method}`, method, params));
      const none = error(await tasksRequest(bob, `n-${method}`, method, { ...params, taskId: 'no-such-task' }));
      expect(e, method).toMatchObject({ code: -32602 });
      // Word for word what an id that does not exist gets: nothing tells bob the task is there.
      expect(e!.message.replace(taskId, 'no-such-task'), method).toBe(none!.message);
      expect(JSON.stringify(e)).not.toContain('working');
    }
    expect(result(await tasksRequest(alice, 'g', 'tasks/get', { taskId }))).toMatchObject({
      taskId,
      status: 'working',
    });
    await tasksRequest(alice, 'c', 'tasks/cancel', { taskId });
    expect(result(await tasksRequest(alice, 'g2', 'tasks/get', { taskId }))).toMatchObject({
      taskId,
      status: 'cancelled',
    });
  });

  it("bob cannot resume alice's parked call with her requestState: refused as not issued to him; alice's retry resumes it", async () => {
    const ask = (token: string, id: string, extra: Record<string, unknown> = {}) =>
      postAs(
        server.url,
        token,
        modernRequest(id, 'tools/call', { name: 'greet_user', arguments: {}, ...extra }, {}, ASKABLE),
      );
    const first = result(await ask(alice, 'q'));
    expect(first.resultType).toBe('input_required');
    const key = Object.keys(first.inputRequests as object)[0]!;
    const retry = {
      requestState: first.requestState,
      inputResponses: { [key]: { action: 'accept', content: { name: 'mallory' } } },
    };
    expect(error(await ask(bob, 'r-bob', retry))).toMatchObject({ code: -32602, data: { reason: 'forged' } });
    retry.inputResponses[key] = { action: 'accept', content: { name: 'alice' } };
    const answered = await ask(alice, 'r-alice', retry);
    expect(JSON.stringify(result(answered).content)).toContain('hello, alice');
  });

  it('the per-caller task limit counts one caller only: alice at her limit does not stop bob', async () => {
    const mine = [await longTask(alice, 'l1'), await longTask(alice, 'l2')];
    const third = await postAs(
      server.url,
      alice,
      modernRequest('l3', 'tools/call', { name: 'task_spin', arguments: { ms: 120_000 } }, { tasks: true }),
    );
    expect(error(third)).toMatchObject({ code: -32000 });
    expect(error(third)!.message).toMatch(/task limit/);
    const his = await longTask(bob, 'b1');
    for (const taskId of mine) await tasksRequest(alice, `c-${taskId}`, 'tasks/cancel', { taskId });
    await tasksRequest(bob, 'c-b', 'tasks/cancel', { taskId: his });
  });

  it('two SDK 2.x clients, each with its own token from the issuer: each lists and calls, in both eras at once', async () => {
    const a = await oauthClient(server.url, idp.issuer, 'alice', 'modern');
    const b = await oauthClient(server.url, idp.issuer, 'bob', 'legacy');
    try {
      const [ra, rb] = await Promise.all([
        a.client.callTool({ name: 'spin', arguments: { ms: 1 } }),
        b.client.callTool({ name: 'spin', arguments: { ms: 1 } }),
      ]);
      expect(ra.isError).toBeFalsy();
      expect(rb.isError).toBeFalsy();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('fairness: the caller is the lane', () => {
  it("with one thread busy, bob's one call runs before alice's backlog of separate 2026 requests (lanes take turns by caller, not by request)", async () => {
    const stats = async () =>
      JSON.parse(
        (
          result(
            await postAs(
              server.url,
              alice,
              modernRequest(`s${Date.now()}`, 'resources/read', { uri: 'executor://stats' }),
            ),
          ).contents as { text: string }[]
        )[0]!.text,
      ) as Record<string, number>;
    const order: string[] = [];
    const call = (token: string, name: string) =>
      postAs(server.url, token, modernRequest(name, 'tools/call', { name: 'spin', arguments: { ms: 150 } })).then(
        (a) => {
          expect(a.status).toBe(200);
          order.push(name);
        },
      );
    const backlog = Array.from({ length: 6 }, (_, i) => call(alice, `alice-${i}`));
    // Bob asks only once alice's calls are all in (one running, five waiting): the order is then the queue's to decide.
    for (const end = Date.now() + 30_000; (await stats()).queued! < 5;)
      if (Date.now() > end) throw new Error("alice's calls never queued");
    await Promise.all([...backlog, call(bob, 'bob')]);
    // alice-0 was running, alice-1 heads her lane; then it is bob's turn. Lanes by request would put bob last (7th).
    expect(order.indexOf('bob'), order.join(' ')).toBeLessThanOrEqual(2);
  });
});
