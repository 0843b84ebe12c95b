/**
 * Cancel → slot reused, embedded against served: examples/embed/server.mjs
 * (the pool on an SDK 2.x `McpServer` of one's own) beside `mcp-cancel-pool
 * serve`, both with one worker thread (and the default standby), over stdio,
 * in both eras. One sample, as in scenarios/cancel-latency.ts "reused": a long
 * `spin` runs (its first progress has arrived), a zero-work `spin` is queued
 * behind it and the long one cancelled in the same write; the time from that
 * write to the zero-work call's answer; beside it, the round trip of a
 * zero-work call on the idle server (the floor under it). Raw JSON-RPC lines,
 * the same bytes to both servers; servers alternate sample by sample.
 *
 * Run: `node dist-dev/bench/embed-slot-reuse.js [samplesPerRow]` (default 30; about a minute).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fmt, summarize } from '#dist/src/probe/stats.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/embed/server.mjs', import.meta.url)); // from dist-dev/bench/
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
};

type Era = '2025' | '2026';
type Msg = { id?: unknown; method?: string; params?: { progressToken?: unknown } };

/** A server over stdio, spoken to in raw lines. */
class Line {
  private readonly child: ChildProcessWithoutNullStreams;
  private partial = '';
  private waiters: { match: (m: Msg) => boolean; resolve: () => void }[] = [];
  private next = 1;

  constructor(
    readonly name: string,
    args: string[],
    readonly era: Era,
  ) {
    this.child = spawn(process.execPath, args, { stdio: 'pipe' });
    this.child.stdout.on('data', (d: Buffer) => {
      const parts = (this.partial + d.toString()).split('\n');
      this.partial = parts.pop()!;
      for (const p of parts) {
        const m = JSON.parse(p) as Msg;
        this.waiters = this.waiters.filter((w) => !(w.match(m) && (w.resolve(), true)));
      }
    });
  }

  private params(p: Record<string, unknown>, token?: string): Record<string, unknown> {
    const meta = { ...(this.era === '2026' && MODERN_META), ...(token !== undefined && { progressToken: token }) };
    return Object.keys(meta).length ? { ...p, _meta: meta } : p;
  }

  private request(method: string, params: Record<string, unknown>, token?: string): { id: number; line: string } {
    const id = this.next++;
    return { id, line: JSON.stringify({ jsonrpc: '2.0', id, method, params: this.params(params, token) }) + '\n' };
  }

  private wait(match: (m: Msg) => boolean): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  async open(): Promise<void> {
    if (this.era === '2025') {
      const init = this.request('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      });
      this.child.stdin.write(init.line);
      await this.wait((m) => m.id === init.id);
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    }
    for (let i = 0; i < 5; i++) await this.call({ ms: 0 }); // warm
  }

  /** A call's round trip, in ms: with `{ ms: 0 }` on an idle server, the floor under a "reused" sample. */
  async call(args: Record<string, unknown>): Promise<number> {
    const r = this.request('tools/call', { name: 'spin', arguments: args });
    const answered = this.wait((m) => m.id === r.id);
    const t0 = performance.now();
    this.child.stdin.write(r.line);
    await answered;
    return performance.now() - t0;
  }

  /** One "reused" sample, in ms. */
  async sample(): Promise<number> {
    const token = `t${this.next}`;
    const long = this.request('tools/call', { name: 'spin', arguments: { ms: 60_000, stageMs: 1 } }, token);
    const running = this.wait((m) => m.method === 'notifications/progress' && m.params?.progressToken === token);
    this.child.stdin.write(long.line);
    await running;
    await new Promise((r) => setTimeout(r, 20));
    const quick = this.request('tools/call', { name: 'spin', arguments: { ms: 0 } });
    const cancel =
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: long.id, reason: 'bench' },
      }) + '\n';
    const answered = this.wait((m) => m.id === quick.id);
    const t0 = performance.now();
    this.child.stdin.write(quick.line + cancel);
    await answered;
    return performance.now() - t0;
  }

  close(): void {
    this.child.kill();
  }
}

const samples = Number(process.argv[2] ?? 30);
const rows: Line[] = [];
for (const era of ['2025', '2026'] as const) {
  rows.push(new Line('serve', [CLI, 'serve', '--threads', '1'], era));
  rows.push(new Line('embedded example', [EXAMPLE, '--threads', '1'], era));
}
await Promise.all(rows.map((r) => r.open()));
const times = new Map<Line, number[]>(rows.map((r) => [r, []]));
const idle = new Map<Line, number[]>(rows.map((r) => [r, []]));
for (let i = 0; i < samples; i++) {
  for (const r of rows) {
    idle.get(r)!.push(await r.call({ ms: 0 }));
    times.get(r)!.push(await r.sample());
    await new Promise((res) => setTimeout(res, 50));
  }
}
for (const r of rows) r.close();

console.log(`cancel → slot reused over stdio, ${samples} samples per row, one worker thread (ms)`);
console.log('era   server             p50     p90     max   | idle call p50');
const p50 = new Map<string, number>();
for (const r of rows) {
  const s = summarize(times.get(r)!);
  p50.set(`${r.era} ${r.name}`, s.p50);
  console.log(
    `${r.era}  ${r.name.padEnd(17)} ${fmt(s.p50).padStart(6)}  ${fmt(s.p90).padStart(6)}  ${fmt(s.max).padStart(6)}  | ${fmt(summarize(idle.get(r)!).p50).padStart(6)}`,
  );
}
for (const era of ['2025', '2026'])
  console.log(
    `${era}: embedded ÷ serve (p50) = ${(p50.get(`${era} embedded example`)! / p50.get(`${era} serve`)!).toFixed(2)}`,
  );
process.exit(0);
