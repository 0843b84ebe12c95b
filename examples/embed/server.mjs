#!/usr/bin/env node
/**
 * An MCP server of your own (the SDK 2.x `McpServer`) with two light tools of
 * its own and the CPU-heavy tools of ./heavy-tools.mjs on a worker pool:
 * cancelling a pooled call stops its work at the next checkpoint, frees its
 * thread at once, and nothing more is sent for it. docs/embedding.md explains it.
 *
 *   node examples/embed/server.mjs                 stdio, either protocol era
 *   node examples/embed/server.mjs --http 3000     Streamable HTTP on 127.0.0.1:3000/mcp, both eras
 *
 * Also: --threads N, --queue-limit N, --grace-ms N (the pool's options). Over
 * HTTP, /healthz, /readyz and /metrics are served too.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { createToolPool } from 'mcp-cancel-pool';

const flag = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : Number(process.argv[i + 1]);
};

// One pool for the process, made once.
const pool = await createToolPool({
  toolModules: [new URL('./heavy-tools.mjs', import.meta.url)],
  ...(flag('--threads') !== undefined && { threads: flag('--threads') }),
  ...(flag('--queue-limit') !== undefined && { queueLimit: flag('--queue-limit') }),
  ...(flag('--grace-ms') !== undefined && { graceMs: flag('--grace-ms') }),
});

/** One server instance: per stdio connection, per 2025 HTTP session, per 2026 HTTP request. Cheap: no schema is converted here. */
function build() {
  const server = new McpServer({ name: 'embed-example', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool(
    'echo',
    { description: 'Echoes `text` back.', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({
      content: [{ type: 'text', text }],
    }),
  );
  server.registerTool('server_time', { description: 'The server clock, as an ISO date (no arguments).' }, () => ({
    content: [{ type: 'text', text: new Date().toISOString() }],
  }));
  pool.register(server); // spin, count_primes
  pool.registerStats(server); // executor://stats
  return server;
}

const stop = async () => {
  await pool.close();
  process.exit(0);
};
process.once('SIGINT', stop).once('SIGTERM', stop);

const port = flag('--http');
if (port === undefined) {
  serveStdio(build); // the opening message picks the era
  process.stdin.once('end', stop); // the client closing stdin ends the server
} else {
  // 2026-07-28: stateless, one server per request. `reject`: never the SDK's stateless 2025 fallback, whose fresh
  // server per POST would never see a 2025 client's notifications/cancelled for a call it did not run.
  const modern = toNodeHandler(createMcpHandler(build, { legacy: 'reject' }));
  // 2025-11-25: a session per client, so its cancel (a POST of its own) reaches the server running the call.
  const sessions = new Map();
  const health = pool.healthHandler();
  const http = createServer(async (req, res) => {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes((req.headers.host ?? '').replace(/:\d+$/, '')))
      return reply(res, 403, 'forbidden host');
    if (health(req, res)) return;
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return reply(res, 404, 'not found');
    let body;
    if (req.method === 'POST') {
      let text = '';
      for await (const chunk of req) text += chunk;
      try {
        body = JSON.parse(text);
      } catch {
        return reply(res, 400, 'Parse error: the body is not JSON', -32700);
      }
    }
    const sid = req.headers['mcp-session-id'];
    if (!sid && req.method === 'POST' && !(await isLegacyRequest(await toWebRequest(req, body), body))) {
      // A 2026 notifications/cancelled by POST (the SDK 2.x client's cancel behind a wrapping transport): the revision
      // cancels by closing the stream, and without per-caller authentication its id could name anyone's call. The
      // SDK would take it with 202 and let the call run on; an error tells the client its cancel did nothing.
      if (body?.method === 'notifications/cancelled')
        return reply(res, 400, 'a 2026-07-28 request is cancelled by closing its response stream', -32600);
      return modern(req, res, body);
    }
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) return reply(res, 404, 'unknown or expired session');
      if (req.method !== 'POST' || !isInitializeRequest(body))
        return reply(res, 400, 'no session: send initialize first');
      transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId); // DELETE, or closed: its calls are cancelled
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(port, '127.0.0.1', () =>
    process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`),
  );
}

function reply(res, status, message, code = -32000) {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
