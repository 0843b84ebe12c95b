/**
 * Baseline (f): what people write today on the SDK's 2.x line. An
 * `McpServer` (@modelcontextprotocol/server 2.4) with `spin` registered the
 * documented way, run on Piscina with the handler's `ctx.mcpReq.signal`
 * passed to `piscina.run`: a 2026 stdio `notifications/cancelled` or a
 * closed 2026 HTTP response stream aborts it, and Piscina terminates the
 * running worker and starts a replacement (a queued task is just dropped).
 * stdio with `serveStdio` (both eras); `--http` serves 127.0.0.1 in both
 * eras (./http-serve.ts: `createMcpHandler` with `legacy: 'reject'` for
 * 2026, a session transport for 2025).
 * `bench://stats` counts the stopped calls, as every baseline does.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Piscina } from 'piscina';
import { z } from 'zod';
import { BASELINE_STATS_URI, flag, spinInput, threadsArg, type BaselineCounters } from './common.js';
import { serveHttpBothEras } from './http-serve.js';
import type { SpinArgs } from './spin-body.js';

const threads = threadsArg();
/** `--blob`: a second tool, `blob`, for the large-result figures only (the other scenarios measure the one-tool server). */
const blob = flag('--blob');
const BLOB_WORKER = new URL('./blob-worker.js', import.meta.url).href;
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0, started: 0 };
const pool = new Piscina<SpinArgs | number, { content: { type: 'text'; text: string }[] }>({
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
  server.registerTool(
    'spin',
    { description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.', inputSchema: spinInput },
    async (args, ctx) => {
      counters.started!++;
      const signal = ctx.mcpReq.signal;
      signal.addEventListener('abort', () => counters.cancelledCalls++, { once: true });
      const result = await pool.run(args, { signal });
      counters.completed++;
      return result;
    },
  );
  if (blob) {
    server.registerTool(
      'blob',
      {
        description: 'Returns `bytes` characters of text (benchmark).',
        inputSchema: z.object({
          bytes: z
            .number()
            .int()
            .min(0)
            .max(64 * 1024 * 1024),
        }),
      },
      async (args) => await pool.run(args.bytes, { filename: BLOB_WORKER }),
    );
  }
  server.registerResource('stats', BASELINE_STATS_URI, { mimeType: 'application/json' }, async () => ({
    contents: [{ uri: BASELINE_STATS_URI, mimeType: 'application/json', text: JSON.stringify(counters) }],
  }));
  return server;
}

if (flag('--http')) {
  serveHttpBothEras('baseline-sdk2-piscina', build);
  process.once('SIGTERM', () => void pool.close({ force: true }).finally(() => process.exit(0)));
} else {
  serveStdio(build);
  process.stdin.once('end', () => void pool.close({ force: true }).finally(() => process.exit(0)));
  process.stderr.write('[baseline-sdk2-piscina] serving on stdio\n');
}
