/**
 * Revision 2026-07-28 multi-round-trip requests (MRTR) over the real wire, the
 * server as a subprocess: a tool that elicits answers `input_required` with a
 * signed `requestState`; the client's retry (a new id) resumes the same job.
 * Raw JSON-RPC lines over stdio, raw fetch over HTTP on 127.0.0.1, and a 2.x
 * SDK client in modern mode, whose multi-round-trip driver retries by itself.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { LineServer, answerCounts, type Wire } from './line-client.js';
import { CLI, sleep, startHttpServer, type HttpServerProcess } from './helpers.js';
import { messagesIn, sseMessages } from './http-helpers.js';
import { MODERN, modernHeaders, modernRequest } from './modern-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
/** A busy machine may take this long to start a server with its pool. */
const STARTUP_MS = 30_000;
const CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** A 2026 client that can answer every kind of question. */
const ASKABLE = { [CAPABILITIES]: { elicitation: {}, sampling: {}, roots: {} } };

let open: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});
function server(args: string[] = []): LineServer {
  const s = new LineServer(['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS, ...args]);
  open.push({ close: () => s.kill() });
  return s;
}
async function http(args: string[] = []): Promise<HttpServerProcess> {
  const s = await startHttpServer(['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS, ...args]);
  open.push({ close: () => s.stop() });
  return s;
}

type Stats = Record<string, number>;
const call = (
  id: string | number,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  meta: Record<string, unknown> = ASKABLE,
) => modernRequest(id, 'tools/call', { name: 'greet_user', arguments: args, ...extra }, {}, meta);
const resultOf = (m: Wire) => m.result as Record<string, unknown>;
const textOf = (m: Wire) => (resultOf(m).content as { text: string }[])[0]!.text;
const accept = (name: string) => ({ action: 'accept', content: { name } });

let statsId = 0;
async function stats(s: LineServer): Promise<Stats> {
  const id = `stats-${statsId++}`;
  s.send(modernRequest(id, 'resources/read', { uri: 'executor://stats' }));
  return JSON.parse((resultOf(await s.answer(id, 60_000)).contents as { text: string }[])[0]!.text) as Stats;
}
/** Polls the stats until `check` holds (the decision is the server's; this only waits for it). */
async function statsUntil(s: LineServer, check: (st: Stats) => boolean, what: string): Promise<Stats> {
  const end = Date.now() + 60_000;
  for (;;) {
    const st = await stats(s);
    if (check(st)) return st;
    if (Date.now() > end) throw new Error(`stats never showed ${what}: ${JSON.stringify(st)}`);
    await sleep(50);
  }
}
/** The one question of an `input_required` answer, checked for shape. */
function question(m: Wire): { key: string; state: string } {
  const r = resultOf(m);
  expect(r.resultType).toBe('input_required');
  const keys = Object.keys(r.inputRequests as object);
  expect(keys).toHaveLength(1);
  const [key] = keys as [string];
  expect((r.inputRequests as Record<string, unknown>)[key]).toMatchObject({
    method: 'elicitation/create',
    params: { message: 'What is your name?' },
  });
  expect(typeof r.requestState).toBe('string');
  return { key, state: r.requestState as string };
}

describe('2026-07-28 multi-round-trip requests over stdio', () => {
  it('answered: input_required with a signed requestState, the retry resumes the same job (work done once) and is the request answered', async () => {
    const s = server();
    s.send(call(1, { ms: 5 }));
    const { key, state } = question(await s.answer(1, STARTUP_MS));
    expect(state).not.toContain('"'); // opaque to the client: no JSON to edit in place
    // A cancel of the answered first request is not a cancel of the parked call: the retry's id is the one that counts.
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    s.send(call(2, { ms: 5 }, { requestState: state, inputResponses: { [key]: accept('octocat') } }));
    const done = await s.answer(2);
    expect(resultOf(done).resultType).toBe('complete');
    expect(textOf(done)).toBe('hello, octocat; prepared 1 time(s) in this thread');
    const st = await statsUntil(s, (x) => x.inFlight === 0, 'the call settled');
    expect(st).toMatchObject({
      completed: 1,
      cancelled: 0,
      failed: 0,
      inputRequired: 1,
      inputRetries: 1,
      inputWaiting: 0,
      requestStatesRefused: 0,
      unknownCancelsIgnored: 1,
    });
    // One answer per id, and no server-to-client request: 2026 has none.
    expect(answerCounts(s.lines).get(1)).toBe(1);
    expect(answerCounts(s.lines).get(2)).toBe(1);
    expect(s.lines.filter((m) => typeof m.method === 'string' && m.id !== undefined)).toEqual([]);
    // A second call in the same thread prepares anew: the first job ran its first stage once.
    s.send(call(3, {}));
    const again = question(await s.answer(3));
    s.send(call(4, {}, { requestState: again.state, inputResponses: { [again.key]: { action: 'decline' } } }));
    expect(textOf(await s.answer(4))).toBe('hello, nobody (decline); prepared 2 time(s) in this thread');
  });

  it('forged, altered, foreign-tool and replayed requestState are refused with -32602 and data.reason; a refused retry leaves the call parked', async () => {
    const s = server();
    s.send(call('q', {}));
    const { key, state } = question(await s.answer('q', STARTUP_MS));
    const [head, body, mac] = state.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const later = Buffer.from(JSON.stringify({ ...payload, x: (payload.x as number) + 3_600_000 })).toString(
      'base64url',
    );
    const tries: [string, unknown, string][] = [
      ['flipped-mac', `${head}.${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`, 'forged'],
      ['longer-life', `${head}.${later}.${mac}`, 'forged'],
      ['made-up', 'm1.eyJ3IjoieCIsInQiOiJncmVldF91c2VyIiwieCI6OTk5OTk5OTk5OTk5OX0.AAAA', 'forged'],
      ['not-a-string', 42, 'forged'],
    ];
    for (const [id, requestState, reason] of tries) {
      s.send(call(id, {}, { requestState, inputResponses: { [key]: accept('mallory') } }));
      expect((await s.answer(id)).error, id).toMatchObject({ code: -32602, data: { reason } });
    }
    // Bound to the tool: the same state on another tool's call.
    s.send(
      modernRequest('other-tool', 'tools/call', { name: 'ask_two', arguments: {}, requestState: state }, {}, ASKABLE),
    );
    expect((await s.answer('other-tool')).error).toMatchObject({
      code: -32602,
      data: { reason: 'wrong_tool' },
      message: expect.stringContaining("issued for tool 'greet_user'"),
    });
    // Answers that are not what was asked: refused, the call still waits.
    s.send(call('bad-answer', {}, { requestState: state, inputResponses: { [key]: { action: 'maybe' } } }));
    expect((await s.answer('bad-answer')).error).toMatchObject({ code: -32602, data: { reason: 'invalid_responses' } });
    expect((await stats(s)).inputWaiting).toBe(1);
    // The genuine retry still resumes it, once.
    s.send(call('real', {}, { requestState: state, inputResponses: { [key]: accept('alice') } }));
    expect(textOf(await s.answer('real'))).toBe('hello, alice; prepared 1 time(s) in this thread');
    s.send(call('replay', {}, { requestState: state, inputResponses: { [key]: accept('mallory') } }));
    const replay = await s.answer('replay');
    expect(replay.error).toMatchObject({ code: -32602, data: { reason: 'used' } });
    const st = await statsUntil(s, (x) => x.inFlight === 0, 'the call settled');
    expect(st).toMatchObject({ completed: 1, cancelled: 0, inputRetries: 1, requestStatesRefused: 7, inputWaiting: 0 });
    expect(s.stderr).not.toContain(state); // the state is not logged
  });

  it('expired: no retry within --input-wait-ms cancels the parked job through the CAS (counted, slot freed); the late retry is refused', async () => {
    const s = server(['--input-wait-ms', '300']);
    s.send(call('wait', {}));
    const { key, state } = question(await s.answer('wait', STARTUP_MS));
    const st = await statsUntil(s, (x) => x.inputWaitsExpired === 1 && x.inFlight === 0, 'the wait expired');
    expect(st).toMatchObject({ cancelled: 1, completed: 0, running: 0, inputWaiting: 0, hardKilled: 0 });
    s.send(call('late', {}, { requestState: state, inputResponses: { [key]: accept('bob') } }));
    expect((await s.answer('late')).error).toMatchObject({ code: -32602, data: { reason: 'expired' } });
    // One thread, no standby: the cancelled job gave its thread back.
    s.send(modernRequest('next', 'tools/call', { name: 'spin', arguments: { ms: 1 } }));
    expect(resultOf(await s.answer('next')).isError).toBeFalsy();
    expect(answerCounts(s.lines).get('wait')).toBe(1);
  });

  it('the env var MCP_CANCEL_POOL_INPUT_WAIT_MS sets the wait too', async () => {
    const s = new LineServer(['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS], [], {
      MCP_CANCEL_POOL_INPUT_WAIT_MS: '200',
    });
    open.push({ close: () => s.kill() });
    s.send(call('wait', {}));
    question(await s.answer('wait', STARTUP_MS));
    expect(await statsUntil(s, (x) => x.inputWaitsExpired === 1, 'the wait expired')).toMatchObject({ cancelled: 1 });
  });

  it('cancel of the retry (notifications/cancelled with the retry id) stops the resumed job; nothing is sent for it', async () => {
    const s = server(['--grace-ms', '10000']);
    s.send(call('first', { ms: 20_000 }));
    const { key, state } = question(await s.answer('first', STARTUP_MS));
    s.send(
      call(
        'retry',
        { ms: 20_000 },
        { requestState: state, inputResponses: { [key]: accept('carol') }, _meta: { progressToken: 'retry-token' } },
      ),
    );
    // The resumed job reports on the retry's own progress token: it runs again.
    await s.until(
      () =>
        s.lines.some(
          (m) =>
            m.method === 'notifications/progress' &&
            (m.params as { progressToken?: unknown }).progressToken === 'retry-token',
        ),
      10_000,
      'progress of the resumed job',
    );
    s.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'retry', reason: 'user stopped it' },
    });
    const st = await statsUntil(
      s,
      (x) => x.cancelled === 1 && x.running === 0 && x.inFlight === 0,
      'the cancel stopped the job',
    );
    expect(st).toMatchObject({ completed: 0, hardKilled: 0, responsesDropped: 0 });
    const seen = s.lines.length;
    s.send(modernRequest('next', 'tools/call', { name: 'spin', arguments: { ms: 1 } }));
    expect(resultOf(await s.answer('next')).isError).toBeFalsy(); // one thread: the 20 s job gave it back
    await sleep(300);
    expect(answerCounts(s.lines).get('retry')).toBeUndefined();
    expect(
      s.lines
        .slice(seen)
        .filter((m) => (m.params as { progressToken?: unknown } | undefined)?.progressToken === 'retry-token'),
    ).toEqual([]);
  });

  it('a retry without the answer is asked again, with a new state; the old one is spent', async () => {
    const s = server();
    s.send(call('ask', {}));
    const first = question(await s.answer('ask', STARTUP_MS));
    s.send(call('empty', {}, { requestState: first.state, inputResponses: { unrelated: { action: 'accept' } } }));
    const again = question(await s.answer('empty'));
    expect(again.key).toBe(first.key);
    expect(again.state).not.toBe(first.state);
    s.send(call('old', {}, { requestState: first.state, inputResponses: { [first.key]: accept('x') } }));
    expect((await s.answer('old')).error).toMatchObject({ code: -32602, data: { reason: 'used' } });
    s.send(call('new', {}, { requestState: again.state, inputResponses: { [again.key]: accept('heidi') } }));
    expect(textOf(await s.answer('new'))).toBe('hello, heidi; prepared 1 time(s) in this thread');
    expect(await statsUntil(s, (x) => x.inFlight === 0, 'settled')).toMatchObject({
      completed: 1,
      inputRequired: 2,
      inputRetries: 2,
    });
  });

  it('a client that did not declare elicitation is not asked: the request is refused with -32021 naming the capability (SEP-2575), nothing is parked', async () => {
    const s = server();
    s.send(call('no-cap', {}, {}, { [CAPABILITIES]: {} }));
    const m = await s.answer('no-cap', STARTUP_MS);
    expect(m.result).toBeUndefined();
    expect(m.error).toMatchObject({
      code: -32021,
      message: expect.stringContaining("declare the 'elicitation' capability"),
      data: { requiredCapabilities: { elicitation: {} } },
    });
    expect(await statsUntil(s, (x) => x.inFlight === 0, 'settled')).toMatchObject({
      inputRequired: 0,
      inputWaiting: 0,
      failed: 1,
    });
  });

  it('questions asked at once go out together; a later question is a second round; every answer reaches the stage', async () => {
    const s = server();
    s.send(modernRequest('two', 'tools/call', { name: 'ask_two', arguments: {} }, {}, ASKABLE));
    const first = resultOf(await s.answer('two', STARTUP_MS));
    expect(
      Object.values(first.inputRequests as Record<string, { method: string }>)
        .map((r) => r.method)
        .sort(),
    ).toEqual(['elicitation/create', 'roots/list']);
    const [nameKey, rootsKey] = ['elicitation/create', 'roots/list'].map(
      (method) =>
        Object.entries(first.inputRequests as Record<string, { method: string }>).find(
          ([, r]) => r.method === method,
        )![0],
    );
    s.send(
      modernRequest(
        'two-b',
        'tools/call',
        {
          name: 'ask_two',
          arguments: {},
          requestState: first.requestState,
          inputResponses: {
            [nameKey!]: accept('dave'),
            [rootsKey!]: { roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] },
          },
        },
        {},
        ASKABLE,
      ),
    );
    const second = resultOf(await s.answer('two-b'));
    expect(second.resultType).toBe('input_required');
    const [[modelKey, modelAsk]] = Object.entries(second.inputRequests as Record<string, { method: string }>) as [
      [string, { method: string }],
    ];
    expect(modelAsk.method).toBe('sampling/createMessage');
    s.send(
      modernRequest(
        'two-c',
        'tools/call',
        {
          name: 'ask_two',
          arguments: {},
          requestState: second.requestState,
          inputResponses: {
            [modelKey]: { role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'm' },
          },
        },
        {},
        ASKABLE,
      ),
    );
    expect(textOf(await s.answer('two-c'))).toBe('dave / 2 roots / hi there');
    expect(await statsUntil(s, (x) => x.inFlight === 0, 'settled')).toMatchObject({
      completed: 1,
      inputRequired: 2,
      inputRetries: 2,
    });
  });

  it('a 2.x SDK client in modern mode with an elicitation handler: its multi-round-trip driver retries and gets the result', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--threads', '1', '--tools', MRTR_TOOLS],
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'mrtr-test', version: '1.0.0' },
      {
        capabilities: { elicitation: {} },
        versionNegotiation: { mode: { pin: MODERN } },
      },
    );
    let asked = 0;
    client.setRequestHandler('elicitation/create', () => {
      asked++;
      return { action: 'accept', content: { name: 'sdk-user' } };
    });
    await client.connect(transport);
    open.push({ close: () => client.close() });
    const r = await client.callTool({ name: 'greet_user', arguments: { ms: 1 } });
    expect((r.content as { text: string }[])[0]!.text).toBe('hello, sdk-user; prepared 1 time(s) in this thread');
    expect(asked).toBe(1);
  });
});

describe('2026-07-28 multi-round-trip requests over Streamable HTTP', () => {
  type Body = ReturnType<typeof modernRequest>;
  const post = (url: URL, body: Body, signal?: AbortSignal) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...modernHeaders(body),
      },
      body: JSON.stringify(body),
      ...(signal && { signal }),
    });
  const one = async (url: URL, body: Body) =>
    messagesIn(await (await post(url, body)).text()).find((m) => m.id === body.id) as Wire;
  const httpStats = async (url: URL) =>
    JSON.parse(
      (
        resultOf(await one(url, modernRequest(`st-${statsId++}`, 'resources/read', { uri: 'executor://stats' })))
          .contents as { text: string }[]
      )[0]!.text,
    ) as Stats;
  async function httpStatsUntil(url: URL, check: (st: Stats) => boolean, what: string): Promise<Stats> {
    const end = Date.now() + 60_000;
    for (;;) {
      const st = await httpStats(url);
      if (check(st)) return st;
      if (Date.now() > end) throw new Error(`stats never showed ${what}: ${JSON.stringify(st)}`);
      await sleep(50);
    }
  }

  it('answered across two POSTs (the first exchange ends with input_required, the job waits), replay refused', async () => {
    const srv = await http();
    const { key, state } = question(await one(srv.url, call(1, { ms: 5 })));
    // The first exchange is over: its end is not a cancel of the parked job.
    expect(await httpStats(srv.url)).toMatchObject({ inputWaiting: 1, cancelled: 0, running: 1 });
    const done = await one(
      srv.url,
      call(2, { ms: 5 }, { requestState: state, inputResponses: { [key]: accept('erin') } }),
    );
    expect(textOf(done)).toBe('hello, erin; prepared 1 time(s) in this thread');
    const replay = await post(srv.url, call(3, {}, { requestState: state, inputResponses: { [key]: accept('x') } }));
    expect(messagesIn(await replay.text())[0]!.error).toMatchObject({ code: -32602, data: { reason: 'used' } });
    expect(await httpStatsUntil(srv.url, (x) => x.inFlight === 0, 'settled')).toMatchObject({
      completed: 1,
      cancelled: 0,
      lateCancelsIgnored: 0,
      inputRetries: 1,
    });
  });

  it('closing the retry stream cancels the resumed job: work stops, the slot is reused, nothing is killed', async () => {
    const srv = await http(['--grace-ms', '10000']);
    const { key, state } = question(await one(srv.url, call('a', { ms: 20_000 })));
    const controller = new AbortController();
    const r = await post(
      srv.url,
      call(
        'b',
        { ms: 20_000 },
        { requestState: state, inputResponses: { [key]: accept('frank') }, _meta: { progressToken: 'b' } },
      ),
      controller.signal,
    );
    const { messages, ended } = sseMessages(r);
    const end = Date.now() + 10_000;
    while (messages.length === 0 && Date.now() < end) await sleep(10);
    expect(messages[0]).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'b' } });
    controller.abort();
    await ended.catch(() => undefined);
    const next = await one(srv.url, modernRequest('next', 'tools/call', { name: 'spin', arguments: { ms: 1 } }));
    expect(resultOf(next).isError).toBeFalsy(); // one thread, no standby: the 20 s job gave it back
    expect(await httpStatsUntil(srv.url, (x) => x.inFlight === 0 && x.running === 0, 'settled')).toMatchObject({
      cancelled: 1,
      completed: 1,
      hardKilled: 0,
      inputRetries: 1,
    });
  });

  it('a 2.x SDK client in modern mode over HTTP: elicitation answered through MRTR', async () => {
    const srv = await http();
    const client = new Client(
      { name: 'mrtr-http', version: '1.0.0' },
      {
        capabilities: { elicitation: {} },
        versionNegotiation: { mode: { pin: MODERN } },
      },
    );
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'grace' } }));
    await client.connect(new StreamableHTTPClientTransport(srv.url));
    open.push({ close: () => client.close() });
    const r = await client.callTool({ name: 'greet_user', arguments: {} });
    expect((r.content as { text: string }[])[0]!.text).toBe('hello, grace; prepared 1 time(s) in this thread');
  });
});

describe('--mrtr-key-file', () => {
  it('signs with the key from the file: another process with the same key verifies the state (but has no such call), one with its own key does not; a short key is refused at start-up', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    // eslint-disable-next-line @typescript-eslint/unbound-method -- path.join is declared as a method but uses no this
    const { join } = await import('node:path');
    const { spawnSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-key-'));
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'k'.repeat(40) + '\n');
    const a = server(['--mrtr-key-file', keyFile]);
    const b = server(['--mrtr-key-file', keyFile]);
    const c = server();
    a.send(call('q', {}));
    const { key, state } = question(await a.answer('q', STARTUP_MS));
    const retry = call('r', {}, { requestState: state, inputResponses: { [key]: accept('x') } });
    b.send(retry);
    c.send(retry);
    expect((await b.answer('r', STARTUP_MS)).error).toMatchObject({ code: -32602, data: { reason: 'foreign' } }); // verified, but issued by a; not 'used'
    expect((await c.answer('r', STARTUP_MS)).error).toMatchObject({ code: -32602, data: { reason: 'forged' } });
    const shortKey = join(dir, 'short');
    writeFileSync(shortKey, 'too-short');
    const refused = spawnSync(process.execPath, [CLI, 'serve', '--mrtr-key-file', shortKey], {
      encoding: 'utf8',
      input: '',
    });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('at least 32 bytes');
    expect(refused.stderr).not.toContain('too-short'); // the key is not echoed
    (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
  });
});
