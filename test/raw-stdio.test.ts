/**
 * Raw JSON-RPC over stdio, for what an SDK client would never send:
 * cancellations that must be ignored in silence, malformed input, and the
 * process lifecycle.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_TOOLS, RawServer, sleep } from './helpers.js';
import { perTestServers } from './per-test-servers.js';

const start = perTestServers((args) => new RawServer(args));
const call = (id: unknown, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta && { _meta: meta }) },
});
const cancel = (params: unknown) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  ...(params !== undefined && { params }),
});

describe('raw JSON-RPC over stdio', () => {
  it('ignores cancels for unknown, completed, initialize and malformed ids, and never writes anything back', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send(call(1, 'spin', { ms: 1 }));
    await s.next((m) => m.id === 1 && 'result' in m);
    const quiet = s.lines.length;
    s.send(cancel({ requestId: 1 })); // completed
    s.send(cancel({ requestId: 'nope', reason: 'unknown' }));
    s.send(cancel({ requestId: 'init' })); // the initialize request
    s.send(cancel(undefined)); // no params
    s.send(cancel({ requestId: null }));
    s.send(cancel({ requestId: { nested: 1 } }));
    s.send(cancel({}));
    s.send({ jsonrpc: '2.0', id: 99, method: 'notifications/cancelled', params: { requestId: 1 } }); // a "cancel" sent as a request
    await sleep(300);
    // The last one carries an id, so it is a request to an unknown method: it alone gets an error.
    const after = s.lines.slice(quiet) as { id?: unknown; error?: { code: number } }[];
    expect(after.filter((m) => m.id !== 99)).toEqual([]);
    const stats = await s.stats();
    expect(stats).toMatchObject({ completed: 1, cancelled: 0, inFlight: 0 });
  });

  it('a cancel naming the id of a request the server sent to the client does not touch it', async () => {
    const s = start(['--threads', '1', '--tools', CLIENT_TOOLS]);
    await s.initialize({ roots: { listChanged: false } });
    s.send(call('c1', 'ask_roots', {}));
    const ask = (await s.next((m) => m.method === 'roots/list')) as { id: number | string };
    const quiet = s.lines.length;
    // Wrong direction: the client names the server's own outbound id.
    s.send(cancel({ requestId: ask.id, reason: 'wrong direction' }));
    await sleep(200);
    expect(s.lines.length).toBe(quiet);
    // The outbound request is still pending: answering it completes the tool call.
    s.send({ jsonrpc: '2.0', id: ask.id, result: { roots: [{ uri: 'file:///tmp', name: 'tmp' }] } });
    const done = (await s.next((m) => m.id === 'c1')) as { result: { content: { text: string }[] } };
    expect(done.result.content[0]!.text).toBe('client has 1 roots');
  });

  it('ids keep their type: a cancel for "5" leaves request 5 running', async () => {
    const s = start(['--threads', '2']);
    await s.initialize();
    s.send(call(5, 'spin', { ms: 300 }));
    s.send(call('5', 'spin', { ms: 5000 }));
    await sleep(50);
    s.send(cancel({ requestId: '5' }));
    const five = await s.next((m) => m.id === 5);
    expect(five).toHaveProperty('result');
    await sleep(100);
    expect(s.lines.filter((m) => (m as { id?: unknown }).id === '5')).toEqual([]);
    expect(await s.stats()).toMatchObject({ completed: 1, cancelled: 1 });
  });

  it('answers bad input with clear errors and keeps serving what is in flight', async () => {
    const s = start(['--threads', '2', '--queue-limit', '1', '--max-message-bytes', '65536']);
    await s.initialize();
    s.send(call('long', 'spin', { ms: 800 }));
    s.send('{ this is not json');
    const parse = (await s.next((m) => (m.error as { code?: number } | undefined)?.code === -32700)) as { id: unknown };
    expect(parse.id).toBeNull();
    s.send(JSON.stringify(call('big', 'spin', { ms: 1, pad: 'x'.repeat(200_000) })));
    const big = (await s.next((m) =>
      /too large/.test(String((m.error as { message?: string } | undefined)?.message)),
    )) as { error: { code: number } };
    expect(big.error.code).toBe(-32600);
    s.send(call('unknown', 'no_such_tool', {}));
    expect(((await s.next((m) => m.id === 'unknown')).error as { code: number }).code).toBe(-32602);
    s.send(call('invalid', 'spin', { ms: 'soon' }));
    const invalid = (await s.next((m) => m.id === 'invalid')) as {
      result: { isError: boolean; content: { text: string }[] };
    };
    expect(invalid.result.isError).toBe(true);
    expect(invalid.result.content[0]!.text).toMatch(/invalid arguments.*ms/s);
    // Two threads, a queue of one: the third long call waits, the fourth is refused at once.
    s.send(call('long2', 'spin', { ms: 800 }));
    s.send(call('queued', 'spin', { ms: 1 }));
    s.send(call('refused', 'spin', { ms: 1 }));
    const refused = (await s.next((m) => m.id === 'refused', 500)) as { error: { code: number; message: string } };
    expect(refused.error.code).toBe(-32000);
    expect(refused.error.message).toMatch(/busy/);
    for (const id of ['long', 'long2', 'queued']) expect(await s.next((m) => m.id === id)).toHaveProperty('result');
    s.send({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'spin', arguments: { ms: 300 } } });
    s.send({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
    const dupError = (await s.next((m) => m.id === 'dup' && 'error' in m)) as { error: { message: string } };
    expect(dupError.error.message).toMatch(/already in flight/);
    expect(await s.next((m) => m.id === 'dup' && 'result' in m)).toBeTruthy();
  });

  it('progress goes out only with a progress token, carries that token, and stops at cancellation', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send(call('plain', 'spin', { ms: 200, stageMs: 1 }));
    await s.next((m) => m.id === 'plain');
    expect(s.lines.some((m) => (m as { method?: string }).method === 'notifications/progress')).toBe(false);
    s.send(call('tracked', 'spin', { ms: 5000, stageMs: 1 }, { progressToken: 'tok-1' }));
    const first = (await s.next((m) => m.method === 'notifications/progress')) as {
      params: { progressToken: unknown; progress: number; total: number };
    };
    expect(first.params.progressToken).toBe('tok-1');
    expect(first.params.total).toBe(5000);
    await sleep(200);
    const seen = s.lines.filter((m) => (m as { method?: string }).method === 'notifications/progress').length;
    expect(seen).toBeGreaterThan(1);
    expect(seen).toBeLessThan(30); // throttled, not one per slice
    s.send(cancel({ requestId: 'tracked' }));
    await sleep(50);
    const atCancel = s.lines.length;
    await sleep(300);
    expect(s.lines.length).toBe(atCancel);
  });

  it('exits promptly when stdin closes, cancelling what runs', async () => {
    const s = start(['--threads', '1', '--grace-ms', '100']);
    await s.initialize();
    s.send(call('busy', 'spin', { ms: 60_000, cooperative: false }, { progressToken: 'p' }));
    await s.next((m) => m.method === 'notifications/progress', 30_000); // on its thread: the call is in flight
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    expect(s.lines.filter((m) => (m as { id?: unknown }).id === 'busy')).toEqual([]);
    // It says what closing stdin cancelled.
    expect(s.stderr).toMatch(/shutting down \(stdin closed\): cancelled 1 call in flight and 0 working tasks\n/);
  });

  const N = 6;
  const initialize = {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
  };
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
  /** Resolves when the child's stdout has ended too: every line it wrote has been read. */
  const allOutput = (s: RawServer) => new Promise<void>((resolve) => s.child.once('close', () => resolve()));
  const answersTo = (s: RawServer, prefix: string) =>
    s.lines.filter((m) => String((m as { id?: unknown }).id).startsWith(prefix)) as {
      id: string;
      result?: { content: { text: string }[] };
      error?: unknown;
    }[];

  it('by default, closing stdin cancels the piped calls in flight and says how many calls and tasks it cancelled', async () => {
    const s = start(['--threads', '1', '--grace-ms', '100']);
    const output = allOutput(s);
    await s.initialize();
    s.send({
      jsonrpc: '2.0',
      id: 'task',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 60_000 }, task: {} },
    });
    await s.next((m) => m.id === 'task');
    // Piped in and closed at once: every call is read (and reserved) before the end of stdin.
    for (let i = 0; i < N; i++) s.send(call(`c${i}`, 'spin', { ms: 60_000 }));
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    await output;
    expect(answersTo(s, 'c')).toEqual([]);
    expect(s.stderr).toMatch(
      new RegExp(`shutting down \\(stdin closed\\): cancelled ${N} calls in flight and 1 working task\\n`),
    );
  });

  it('--on-stdin-close finish: every call piped in before stdin closed is answered on stdout, then it exits 0', async () => {
    const s = start(['--threads', '2', '--on-stdin-close', 'finish']);
    const output = allOutput(s);
    // A script: everything written at once, stdin closed before any answer.
    s.send(initialize);
    s.send(initialized);
    for (let i = 0; i < N; i++) s.send(call(`c${i}`, 'spin', { ms: 200 }));
    s.send({
      jsonrpc: '2.0',
      id: 'task',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 300 }, task: {} },
    });
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    await output;
    const answers = answersTo(s, 'c');
    expect(answers.map((a) => a.id).sort()).toEqual(Array.from({ length: N }, (_, i) => `c${i}`));
    for (const a of answers) expect(a.result?.content[0]?.text).toMatch(/^spun 200 slices in /);
    expect(s.stderr).toMatch(
      /stdin closed: answering \d+ calls? in flight before exiting \(--on-stdin-close finish; at most 25000 ms\)/,
    );
    // Nothing was cancelled but the task nobody waited on (its answer can no longer be asked for).
    expect(s.stderr).toMatch(/shutting down \(stdin closed\)(: cancelled 0 calls in flight and 1 working task)?\n/);
  });

  it('--on-stdin-close finish waits at most --drain-timeout-ms, then cancels what is left and says so', async () => {
    const s = start(['--threads', '2', '--on-stdin-close', 'finish', '--drain-timeout-ms', '500', '--grace-ms', '100']);
    const output = allOutput(s);
    s.send(initialize);
    s.send(initialized);
    s.send(call('quick', 'spin', { ms: 20 }));
    s.send(call('slow', 'spin', { ms: 60_000 }));
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    await output;
    expect(answersTo(s, 'quick')).toHaveLength(1);
    expect(answersTo(s, 'slow')).toEqual([]);
    expect(s.stderr).toMatch(/shutting down \(stdin closed\): cancelled 1 call in flight and 0 working tasks\n/);
  });

  it('exits on SIGTERM', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send(call('busy', 'spin', { ms: 60_000 }));
    await sleep(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(s.stderr).toMatch(/shutting down \(SIGTERM\)/);
  });
});
