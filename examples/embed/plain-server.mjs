#!/usr/bin/env node
/**
 * For comparison only: the same heavy tool the way one writes it with the SDK
 * and Piscina alone, handing Piscina the request's signal. It mostly works;
 * docs/embedding.md lists what the probe finds wrong with it, and why
 * examples/embed/server.mjs uses mcp-cancel-pool instead.
 *
 *   node examples/embed/plain-server.mjs [--http PORT] [--threads N]
 */
import { createServer } from 'node:http';
import { MessageChannel } from 'node:worker_threads';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Piscina } from 'piscina';
import { z } from 'zod';

const flag = (name) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : undefined);
const threads = flag('--threads') ?? 2;
const piscina = new Piscina({
  filename: new URL('./plain-spin-worker.mjs', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
});

function build() {
  const server = new McpServer({ name: 'plain-example', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes `text` back.', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'spin',
    {
      description: 'Burns CPU for `ms` milliseconds.',
      inputSchema: z.object({ ms: z.number().min(0), stageMs: z.number().positive().default(5) }),
    },
    async ({ ms, stageMs }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (p) => {
        if (token !== undefined)
          void ctx.mcpReq
            .notify({ method: 'notifications/progress', params: { progressToken: token, ...p } })
            .catch(() => {});
      });
      try {
        // Piscina stops the task when the signal aborts: a queued one leaves the queue, a running one's thread is terminated.
        const r = await piscina.run({ ms, stageMs, port: port2 }, { signal: ctx.mcpReq.signal, transferList: [port2] });
        return { content: [{ type: 'text', text: `spun ${r.slices} slices in ${r.elapsedMs.toFixed(1)} ms` }] };
      } finally {
        port1.close();
      }
    },
  );
  return server;
}

const port = flag('--http');
if (port === undefined) {
  serveStdio(build);
  process.stdin.once('end', () => process.exit(0));
} else {
  const handler = toNodeHandler(createMcpHandler(build)); // the SDK's defaults: 2026, and 2025 served statelessly
  const http = createServer((req, res) => void handler(req, res));
  http.listen(port, '127.0.0.1', () =>
    process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`),
  );
}
