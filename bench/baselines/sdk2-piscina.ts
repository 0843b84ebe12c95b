/**
 * Baseline (f): what people write today on the SDK's 2.x line. An
 * `McpServer` (@modelcontextprotocol/server 2.4) with `spin` registered the
 * documented way, run on Piscina with the handler's `ctx.mcpReq.signal`
 * passed to `piscina.run`: a 2026 stdio `notifications/cancelled` or a
 * closed 2026 HTTP response stream aborts it, and Piscina terminates the
 * running worker and starts a replacement (a queued task is just dropped).
 * stdio with `serveStdio` (both eras); `--http` serves 127.0.0.1 through
 * `createMcpHandler` (`legacy: 'reject'`: the 2026 leg) and `toNodeHandler`.
 * `bench://stats` counts the stopped calls, as every baseline does.
 */
import { createServer } from 'node:http';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Piscina } from 'piscina';
import { BASELINE_STATS_URI, flag, spinInput, threadsArg, type BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';

const threads = threadsArg();
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const pool = new Piscina<SpinArgs, { content: { type: 'text'; text: string }[] }>({
  filename: new URL('./piscina-worker.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.POSITIVE_INFINITY,
});
// Piscina destroys (terminates) a worker only when a running task is aborted, or when the pool closes.
pool.on('workerDestroy', () => counters.stopped++);
pool.on('error', (e: unknown) => process.stderr.write(`[baseline-sdk2-piscina] pool error: ${String(e)}\n`));

/** One server per connection (stdio) or per exchange (2026 HTTP); the pool is the process's. */
function build(): McpServer {
  const server = new McpServer({ name: 'baseline-sdk2-piscina', version: '0.0.0' });
  server.registerTool('spin', { description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.', inputSchema: spinInput }, async (args, ctx) => {
    const signal = ctx.mcpReq.signal;
    signal.addEventListener('abort', () => counters.cancelledCalls++, { once: true });
    const result = await pool.run(args, { signal });
    counters.completed++;
    return result;
  });
  server.registerResource('stats', BASELINE_STATS_URI, { mimeType: 'application/json' }, async () => ({
    contents: [{ uri: BASELINE_STATS_URI, mimeType: 'application/json', text: JSON.stringify(counters) }],
  }));
  return server;
}

if (flag('--http')) {
  const handler = toNodeHandler(createMcpHandler(build, { legacy: 'reject' }));
  const http = createServer((req, res) => void handler(req, res));
  http.listen(0, '127.0.0.1', () => {
    const address = http.address();
    process.stderr.write(`[baseline-sdk2-piscina] listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp\n`);
  });
  process.once('SIGTERM', () => void pool.close({ force: true }).finally(() => process.exit(0)));
} else {
  serveStdio(build);
  process.stdin.once('end', () => void pool.close({ force: true }).finally(() => process.exit(0)));
  process.stderr.write('[baseline-sdk2-piscina] serving on stdio\n');
}
