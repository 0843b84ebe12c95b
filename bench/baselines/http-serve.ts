/**
 * How the SDK 2.x baselines ((f), (g)) serve Streamable HTTP in both eras,
 * wired as the SDK's docs say: a 2026-07-28 request (it carries the `_meta`
 * envelope) goes to `createMcpHandler(factory, { legacy: 'reject' })`, one
 * server per request; a 2025-11-25 one, as `isLegacyRequest` classifies it,
 * to a sessionful `NodeStreamableHTTPServerTransport`, one server per
 * session, found by its `Mcp-Session-Id` (the SDK's stateless 2025 fallback
 * has no sessions, so a `notifications/cancelled` POST could never reach the
 * call it names). Nothing else: no Host or Origin checks, no session limit,
 * no idle sweep; the baseline pays only for what the SDK does.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest, type McpServer, type Server } from '@modelcontextprotocol/server';

/** Reads a request's body; undefined when there is none (GET, DELETE). */
async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined; // the transport answers a parse error itself
  }
}

/**
 * Serves `factory`'s servers on 127.0.0.1 (any free port) at /mcp in both
 * eras, and says "listening on <url>" on stderr, as every bench server does.
 */
export function serveHttpBothEras(name: string, factory: () => McpServer | Server): void {
  const modern = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }));
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();

  const legacy = async (req: IncomingMessage, res: ServerResponse, parsed: unknown, sid: string | undefined) => {
    if (sid !== undefined) {
      const transport = sessions.get(sid);
      if (!transport)
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unknown session"}}');
      return transport.handleRequest(req, res, parsed);
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await factory().connect(transport);
    await transport.handleRequest(req, res, parsed);
  };

  const http = createServer((req, res) => {
    void (async () => {
      const parsed = req.method === 'POST' ? await body(req) : undefined;
      const sid = req.headers['mcp-session-id'];
      const session = typeof sid === 'string' ? sid : undefined;
      if (
        session !== undefined ||
        req.method !== 'POST' ||
        (await isLegacyRequest(await toWebRequest(req, parsed), parsed))
      )
        return legacy(req, res, parsed, session);
      return modern(req, res, parsed);
    })().catch((error: unknown) => {
      process.stderr.write(`[${name}] ${String(error)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.listen(0, '127.0.0.1', () => {
    const address = http.address();
    process.stderr.write(
      `[${name}] listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp\n`,
    );
  });
}
