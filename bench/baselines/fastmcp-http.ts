/**
 * Baseline (h): fastmcp (punkpeye, 4.20) serving Streamable HTTP the way its
 * README shows (`transportType: 'httpStream'`, sessionful, 2025-11-25 only),
 * with one tool, `spin`, run on Piscina with the tool context's `signal`
 * passed to `piscina.run` (as (f) does): a `notifications/cancelled` aborts
 * it and Piscina terminates the worker. fastmcp's periodic ping is off: the
 * bench's clients open no GET stream for it to travel on. `bench://stats`
 * counts the stopped calls, as every baseline does.
 *
 *   node fastmcp-http.js --threads N     (says "listening on <url>" on stderr)
 */
import { FastMCP } from 'fastmcp';
import { Piscina } from 'piscina';
import { BASELINE_STATS_URI, spinInput, threadsArg, type BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';
import { freePort } from '../lib/free-port.js';

const threads = threadsArg();
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0, started: 0 };
const pool = new Piscina<SpinArgs, { content: { type: 'text'; text: string }[] }>({
  filename: new URL('./piscina-worker.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.POSITIVE_INFINITY,
});
pool.on('workerDestroy', () => counters.stopped++);
pool.on('error', (e: unknown) => process.stderr.write(`[baseline-fastmcp] pool error: ${String(e)}\n`));

const server = new FastMCP({
  name: 'baseline-fastmcp',
  version: '1.0.0',
  ping: { enabled: false },
  roots: { enabled: false },
});
server.addTool({
  name: 'spin',
  description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.',
  parameters: spinInput,
  execute: async (args, { signal }) => {
    counters.started!++;
    signal?.addEventListener('abort', () => counters.cancelledCalls++, { once: true });
    const result = await pool.run(args, signal ? { signal } : {});
    counters.completed++;
    return { content: result.content };
  },
});
server.addResource({
  uri: BASELINE_STATS_URI,
  name: 'stats',
  mimeType: 'application/json',
  load: async () => ({ text: JSON.stringify(counters) }),
});

const port = await freePort();
await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', endpoint: '/mcp' } });
process.stderr.write(`[baseline-fastmcp] listening on http://127.0.0.1:${port}/mcp\n`);
process.once('SIGTERM', () => void pool.close({ force: true }).finally(() => process.exit(0)));
