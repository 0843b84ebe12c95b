/**
 * What a stdio peer may do to the server without ending it: absurdly nested
 * lines, a request with a bad envelope, not reading stdout at all, closing
 * stdout. All over the real wire, against the server subprocess.
 */
import { describe, expect, it } from 'vitest';
import { answerCounts, LineServer } from './line-client.js';
import { perTestServers } from './per-test-servers.js';

const start = perTestServers((args) => new LineServer(args));
// A heap cap turns retention into a crash: the old server kept every blocked answer (+575 MB) and would die here.
const startCapped = perTestServers((args) => new LineServer(args, ['--max-old-space-size=128']));
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const spin = (id: unknown, ms: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'spin', arguments: { ms } },
});
const errorOf = (m: Record<string, unknown>) => m.error as { code: number; message: string };

describe('stdio: hostile lines', () => {
  it('survives a response nested 5,000 deep, even before initialize, and refuses deep requests with their id', async () => {
    const s = start(['--threads', '1']);
    // Reaches the SDK's unknown-id path, whose JSON.stringify overflowed the stack and ended the process.
    s.send(`{"jsonrpc":"2.0","id":1,"result":{"x":${nested(5000)}}}`);
    const refused = await s.answer(null);
    expect(errorOf(refused).code).toBe(-32600);
    expect(errorOf(refused).message).toMatch(/nested deeper than 128 levels/);
    s.send(`{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":${nested(100_000)}}}`);
    expect(errorOf(await s.answer('deep'))).toMatchObject({ code: -32600, message: expect.stringMatching(/nested/) });
    // Nesting within the limit is served as before.
    s.send(`{"jsonrpc":"2.0","id":"shallow","method":"ping","params":{"x":${nested(100)}}}`);
    expect(await s.answer('shallow')).toHaveProperty('result');
    await s.initialize();
    s.send(`{"jsonrpc":"2.0","id":2,"result":{"x":${nested(5000)}}}`);
    s.send(spin('after', 1));
    expect(await s.answer('after')).toHaveProperty('result');
    expect(s.child.exitCode).toBeNull();
  });

  it('answers a request with a bad envelope with its own id, and a bad notification not at all', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 1 }, _meta: { progressToken: {} } },
    });
    const bad = errorOf(await s.answer(7));
    expect(bad.code).toBe(-32600);
    expect(bad.message).toMatch(/params\._meta\.progressToken: expected string.*or expected number/);
    s.send({ jsonrpc: '1.0', id: 'v1', method: 'ping' });
    expect(errorOf(await s.answer('v1'))).toMatchObject({ code: -32600, message: expect.stringMatching(/jsonrpc/) });
    // No id to recover: null, as JSON-RPC says.
    s.send({ jsonrpc: '2.0', id: { no: 1 }, method: 'ping' });
    expect(errorOf(await s.answer(null)).code).toBe(-32600);
    const before = s.lines.length;
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: 5 });
    s.send({ jsonrpc: '2.0', id: 'ok', method: 'ping' });
    await s.answer('ok', 10_000, before);
    expect(s.lines.slice(before)).toEqual([{ jsonrpc: '2.0', id: 'ok', result: {} }]);
  });
});

describe('stdio: a client that stops reading stdout', () => {
  // Half pings, half zero-work tool calls: every one answered at once, so every answer piles up unread.
  const flood = (n: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify(i % 2 ? { jsonrpc: '2.0', id: i, method: 'ping' } : spin(i, 0)));

  it(
    'stops reading stdin while its output is blocked, keeps memory bounded, and answers everything once the client reads again',
    { timeout: 180_000 },
    async () => {
      const s = startCapped(['--threads', '1']);
      await s.initialize();
      s.send(spin('warm', 0)); // the pool's workers start on the first call: count them in the baseline
      await s.answer('warm');
      const base = s.rssMb();
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, s.rssMb())), 50);
      try {
        s.stopReading();
        const n = 100_000;
        const { taken, total } = await s.flood(flood(n), 1500);
        peak = Math.max(peak, s.rssMb());
        // The old server read everything and buffered every answer: +236 MB by this point.
        expect(peak - base).toBeLessThan(100);
        expect(taken).toBeLessThan(total / 2); // it stopped admitting work
        s.resumeReading();
        // A correctness check, not a speed one: SDK 2.x spends about twice 1.x's time per message, and the machine may be busy.
        await s.until(() => answerCounts(s.lines).size >= n + 2, 120_000, `answers to ${n} calls`);
        const counts = answerCounts(s.lines);
        for (let i = 0; i < n; i++) expect(counts.get(i), `answers to ${i}`).toBe(1);
        // Answering them all at full speed costs garbage, not retention (the old server: +575 MB here).
        expect(peak - base).toBeLessThan(200);
      } finally {
        clearInterval(sampler);
      }
      s.send({ jsonrpc: '2.0', id: 'ping-after', method: 'ping' });
      expect(await s.answer('ping-after')).toHaveProperty('result');
      expect(s.child.exitCode).toBeNull();
      // One 'drain' listener in all, not one per blocked write (Node warns past 10).
      expect(s.stderr).not.toMatch(/MaxListenersExceeded/);
    },
  );

  it('ends with exit 0 on SIGTERM while its output is blocked', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.stopReading();
    const { taken, total } = await s.flood(flood(100_000), 1500);
    expect(taken).toBeLessThan(total);
    const t = performance.now();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // Promptly, not hung: 7 s were measured with the machine's load average at 20.
    expect(performance.now() - t).toBeLessThan(15_000);
    expect(s.stderr).toMatch(/shutting down \(SIGTERM\)/);
  });
});

describe('stdio: a client that closes stdout', () => {
  it('shuts down cleanly (exit 0, one log line, no EPIPE crash) when stdout is closed while stdin stays open', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.child.stdout.destroy();
    s.send({ jsonrpc: '2.0', id: 'into-the-void', method: 'ping' });
    s.send(spin('void-call', 1));
    expect(await s.exited).toBe(0);
    expect(s.stderr).toMatch(/shutting down \(stdout failed: EPIPE\)/);
    expect(s.stderr).not.toMatch(/Error: write EPIPE|Unhandled|\n\s+at /);
  });
});
