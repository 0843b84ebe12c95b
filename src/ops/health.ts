/**
 * `GET /healthz` (the process is up), `GET /readyz` (it can take calls) and
 * `GET /metrics` (Prometheus text format): one handler, mounted on the MCP
 * HTTP server before its authentication, or served on its own port
 * (`--health-port`) by stdio `serve` and `worker`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/** Whether the process can take calls now, and if not, why. */
export type Readiness = () => Promise<{ ready: true } | { ready: false; why: string }>;

/** Options for {@link healthHandler}. */
export interface HealthOptions {
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** Require `Authorization: Bearer <token>` on these paths too (`--health-auth`). */
  readonly authToken?: string;
}

/** Answers the three paths; returns false for any other request (the caller serves it). */
export type HealthHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The handler; see the module comment. */
export function healthHandler(options: HealthOptions): HealthHandler {
  const expected = options.authToken === undefined ? undefined : digest(options.authToken);
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (!PATHS.has(path)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain', 'method not allowed\n', { allow: 'GET, HEAD' });
      return true;
    }
    if (expected && !authorized(req, expected)) {
      send(res, 401, 'text/plain', 'authorization required: send Authorization: Bearer <token>\n', {
        'www-authenticate': 'Bearer realm="mcp-cancel-pool"',
      });
      return true;
    }
    void answer(path, options, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `${error instanceof Error ? error.message : String(error)}\n`);
    });
    return true;
  };
}

async function answer(path: string, options: HealthOptions, res: ServerResponse): Promise<void> {
  if (path === '/healthz') return send(res, 200, 'text/plain', 'ok\n');
  if (path === '/readyz') {
    const r = await options.readiness();
    return r.ready ? send(res, 200, 'text/plain', 'ready\n') : send(res, 503, 'text/plain', `not ready: ${r.why}\n`);
  }
  send(res, 200, options.metrics.contentType, await options.metrics.text());
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  res.end(body);
}

function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const presented = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), expected);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A listening health server (`--health-port`). */
export interface HealthServer {
  /** e.g. http://127.0.0.1:9464 */
  readonly url: string;
  /** Stops listening and closes every connection; resolves once the server is closed. */
  close(): Promise<void>;
}

/** Serves only the health paths on `host:port` (other paths: 404). */
export async function serveHealth(handler: HealthHandler, host: string, port: number): Promise<HealthServer> {
  // Loaded here: an embedder's pool reaches this file for healthHandler and must not load the HTTP stack for it.
  const { createServer } = await import('node:http');
  const server: Server = createServer((req, res) => {
    if (!handler(req, res)) send(res, 404, 'text/plain', 'not found: /healthz, /readyz and /metrics live here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
