/**
 * Baseline (g): (e)'s minimal cooperative design on the SDK line ours stands
 * on. The SDK 2.x low-level `Server` (@modelcontextprotocol/server 2.4) with
 * a `tools/call` handler that checks `spin`'s arguments with zod, served on
 * stdio with `serveStdio` (both eras) or, with `--http`, Streamable HTTP in
 * both eras (./http-serve.ts), and (e)'s pool and flags (./coop-pool.ts),
 * set by the request's `ctx.mcpReq.signal`. Set beside (e)
 * (SDK 1.32), it shows what the SDK line costs a call, apart from ours' own
 * layers.
 */
import { ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { BASELINE_STATS_URI, flag, spinInput, threadsArg, type BaselineCounters } from './common.js';
import { serveHttpBothEras } from './http-serve.js';
import { coopPool } from './coop-pool.js';

const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0, started: 0 };
const pool = coopPool('baseline-sdk2-coop', threadsArg(), counters, true);

const tool: Tool = {
  name: 'spin',
  description: 'Burns CPU for `ms` milliseconds in slices of `stageMs`.',
  inputSchema: z.toJSONSchema(spinInput, { io: 'input' }) as Tool['inputSchema'],
};

/** One server per connection (stdio), per 2026 request or per 2025 session (HTTP); the pool and the flags are the process's. */
function build(): Server {
  const server = new Server(
    { name: 'baseline-sdk2-coop', version: '0.0.0' },
    { capabilities: { tools: {}, resources: {} } },
  );
  server.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    if (request.params.name !== 'spin')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool '${request.params.name}'`);
    counters.started!++;
    const parsed = spinInput.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, z.prettifyError(parsed.error));
    const result = await pool.run(parsed.data, ctx.mcpReq.signal);
    counters.completed++;
    return result;
  });
  server.setRequestHandler('resources/list', () => ({
    resources: [{ uri: BASELINE_STATS_URI, name: 'stats', mimeType: 'application/json' }],
  }));
  server.setRequestHandler('resources/read', (request) => {
    if (request.params.uri !== BASELINE_STATS_URI)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown resource ${request.params.uri}`);
    return { contents: [{ uri: BASELINE_STATS_URI, mimeType: 'application/json', text: JSON.stringify(counters) }] };
  });
  return server;
}

if (flag('--http')) {
  serveHttpBothEras('baseline-sdk2-coop', build);
  process.once('SIGTERM', () => void pool.close().finally(() => process.exit(0)));
} else {
  serveStdio(build);
  process.stdin.once('end', () => void pool.close().finally(() => process.exit(0)));
  process.stderr.write('[baseline-sdk2-coop] serving on stdio\n');
}
