/**
 * Baseline (g): (e)'s minimal cooperative design on the SDK line ours stands
 * on. The SDK 2.x low-level `Server` (@modelcontextprotocol/server 2.4) with
 * a `tools/call` handler that checks `spin`'s arguments with zod, served on
 * stdio with `serveStdio` (both eras), and Piscina with one Int32 flag per
 * call in a SharedArrayBuffer: the request's `ctx.mcpReq.signal` sets it, the
 * worker (the same file as (e)'s) checks it between slices and leaves. No
 * registry, no admission queue, no state machine, no escalation; Piscina's
 * own queue holds what waits. Set beside (e) (SDK 1.32), it shows what the
 * SDK line costs a call, apart from ours' own layers.
 */
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Piscina } from 'piscina';
import { z } from 'zod';
import { BASELINE_STATS_URI, spinInput, threadsArg, type BaselineCounters } from './common.js';
import type { CoopTask } from './piscina-coop-worker.js';

const threads = threadsArg();
/** More flags than calls can ever be in flight at once in the bench. */
const FLAGS = 4096;
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const flags = new Int32Array(new SharedArrayBuffer(FLAGS * Int32Array.BYTES_PER_ELEMENT));
const free: number[] = Array.from({ length: FLAGS }, (_, i) => FLAGS - 1 - i);
const pool = new Piscina<CoopTask, CallToolResult>({
  filename: new URL('./piscina-coop-worker.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.POSITIVE_INFINITY,
  workerData: flags.buffer,
});
pool.on('error', (e: unknown) => process.stderr.write(`[baseline-sdk2-coop] pool error: ${String(e)}\n`));

const tool: Tool = { name: 'spin', description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.', inputSchema: z.toJSONSchema(spinInput, { io: 'input' }) as Tool['inputSchema'] };

/** One server per connection; the pool and the flags are the process's. */
function build(): Server {
  const server = new Server({ name: 'baseline-sdk2-coop', version: '0.0.0' }, { capabilities: { tools: {}, resources: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    if (request.params.name !== 'spin') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool '${request.params.name}'`);
    const parsed = spinInput.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, z.prettifyError(parsed.error));
    const slot = free.pop();
    if (slot === undefined) throw new Error('too many calls in flight');
    Atomics.store(flags, slot, 0);
    const signal = ctx.mcpReq.signal;
    const abort = () => {
      counters.cancelledCalls++;
      Atomics.store(flags, slot, 1);
    };
    signal.addEventListener('abort', abort, { once: true });
    try {
      const result = await pool.run({ args: parsed.data, slot });
      counters.completed++;
      return result;
    } catch (error) {
      if (signal.aborted) counters.stopped++; // the worker saw the flag and left
      throw error;
    } finally {
      signal.removeEventListener('abort', abort);
      free.push(slot);
    }
  });
  server.setRequestHandler('resources/list', () => ({ resources: [{ uri: BASELINE_STATS_URI, name: 'stats', mimeType: 'application/json' }] }));
  server.setRequestHandler('resources/read', (request) => {
    if (request.params.uri !== BASELINE_STATS_URI) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown resource ${request.params.uri}`);
    return { contents: [{ uri: BASELINE_STATS_URI, mimeType: 'application/json', text: JSON.stringify(counters) }] };
  });
  return server;
}

serveStdio(build);
process.stdin.once('end', () => void pool.close({ force: true }).finally(() => process.exit(0)));
process.stderr.write('[baseline-sdk2-coop] serving on stdio\n');
