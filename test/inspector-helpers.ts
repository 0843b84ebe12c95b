/**
 * Running the MCP Inspector 2.x web UI for the "press Cancel" tests: its launcher on the test's Node (the
 * package's `engines` is node >= 22.19, which CI's 22 and 26 meet), bound to 127.0.0.1, behind its own API token, with its storage in a
 * temporary directory and its secrets in memory, so that a run leaves nothing in the user's home.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../bench/lib/free-port.js';
import { sleep, stopChild } from './helpers.js';

const LAUNCHER = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);
/** The Inspector's package version, as its footer shows it. */
export const INSPECTOR_VERSION: string = (
  JSON.parse(
    await readFile(
      fileURLToPath(new URL('../node_modules/@modelcontextprotocol/inspector/package.json', import.meta.url)),
      'utf8',
    ),
  ) as { version: string }
).version;

/** The Inspector's name for a protocol era (`--protocol-era`), and the revision it then negotiates with us. */
export const ERAS = { legacy: '2025-11-25', modern: '2026-07-28' } as const;
export type Era = keyof typeof ERAS;

/** What the Inspector connects to: a stdio command it spawns, or a Streamable HTTP URL. */
export type Target = { kind: 'stdio'; command: string; args: string[] } | { kind: 'http'; url: URL };

/** A running Inspector web UI. */
export interface Inspector {
  /** The page to open, with the API token in the query (how the Inspector prints it). */
  readonly url: string;
  /** The UI's origin, without the token. */
  readonly origin: string;
  /** The launcher's output with the token replaced by `<token>`, for failure messages. */
  output(): string;
  /** Marker in the environment of the stdio server it spawns, to prove that server is gone after `stop`. */
  readonly marker: string;
  stop(): Promise<void>;
}

/** The Inspector needs a fixed CLIENT_PORT (it derives its origin allow-list from it). */
export { freePort };

/** Our own copy of the environment, without any Inspector auth setting a developer may have exported. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v === undefined ||
      /^(MCP_PROXY_AUTH_TOKEN|MCP_INSPECTOR_API_TOKEN|DANGEROUSLY_OMIT_AUTH|DANGEROUSLY_BIND_ALL_INTERFACES|HOST|CLIENT_PORT|SERVER_PORT)$/.test(
        k,
      )
    )
      continue;
    env[k] = v;
  }
  return env;
}

/**
 * Starts the Inspector's web UI on `node` (22.19 or newer: its engines) for one server in one era. Auth stays on: a random token
 * (MCP_INSPECTOR_API_TOKEN; 1.x called it MCP_PROXY_AUTH_TOKEN, which 2.x still reads) that the page gets in
 * its URL, as the launcher prints it; DANGEROUSLY_OMIT_AUTH is removed from the environment, never set.
 */
export async function startInspector(node: string, target: Target, era: Era): Promise<Inspector> {
  const token = randomBytes(32).toString('hex');
  const marker = randomUUID();
  const storage = await mkdtemp(join(tmpdir(), 'inspector-'));
  const targetArgs =
    target.kind === 'http'
      ? ['--transport', 'http', '--server-url', target.url.href]
      : ['-e', `INSPECTOR_TEST_RUN=${marker}`, '--', target.command, ...target.args];
  // A port taken between freePort() and the launcher's bind makes it exit: try another, a bounded number of times.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const env = {
      ...cleanEnv(),
      HOST: '127.0.0.1',
      CLIENT_PORT: String(port),
      MCP_SANDBOX_PORT: '0', // the MCP Apps sandbox: any free port
      MCP_APP_ORIGIN_PORT: '0',
      MCP_AUTO_OPEN_ENABLED: 'false',
      MCP_INSPECTOR_API_TOKEN: token,
      MCP_STORAGE_DIR: storage,
      MCP_INSPECTOR_SECRET_STORE: 'memory',
    };
    const child = spawn(node, [LAUNCHER, '--web', '--protocol-era', era, ...targetArgs], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const output = () => out.replaceAll(token, '<token>');
    const up = await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Inspector neither started nor exited in 60 s:\n${output()}`)),
        60_000,
      ); // a bound on a hang
      const onData = () => {
        if (!/is up and running at/.test(out)) return;
        clearTimeout(timer);
        resolve(true);
      };
      child.stdout.on('data', onData);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!up) {
      if (attempt < 3 && /EADDRINUSE/.test(out)) continue;
      await rm(storage, { recursive: true, force: true });
      throw new Error(`Inspector exited before serving:\n${output()}`);
    }
    const origin = `http://127.0.0.1:${port}`;
    return {
      url: `${origin}/?MCP_INSPECTOR_API_TOKEN=${token}`,
      origin,
      output,
      marker,
      stop: async () => {
        await stopInspector(child);
        await rm(storage, { recursive: true, force: true });
      },
    };
  }
}

/** SIGTERM, and SIGKILL if it has not gone within 10 s: the test must not leave it running. */
async function stopInspector(child: ChildProcess): Promise<void> {
  const stopped = stopChild(child);
  const late = await Promise.race([stopped.then(() => false), sleep(10_000).then(() => true)]);
  if (late) {
    child.kill('SIGKILL');
    await stopped;
  }
}

/** Pids of live processes whose environment carries `marker` (Linux /proc). */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.includes(`INSPECTOR_TEST_RUN=${marker}`)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * The server's cancels that won, by who asked (`mcp_cancel_pool_cancels_total{source}` on its /metrics at
 * `origin`): `notification`, `closed_stream`, `tasks_cancel`, … Sources never counted are absent.
 */
export async function cancelsBySource(origin: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const sources: Record<string, number> = {};
  for (const m of text.matchAll(/^mcp_cancel_pool_cancels_total\{([^}]*)\} (\S+)$/gm)) {
    const source = /\bsource="([^"]+)"/.exec(m[1]!)?.[1];
    if (source !== undefined && Number(m[2]) > 0) sources[source] = (sources[source] ?? 0) + Number(m[2]);
  }
  return sources;
}

/** What went between the Inspector and an HTTP server, as a recording proxy saw it. */
export interface WireEvent {
  /** `request`: a POST's JSON-RPC messages arrived; `answered`: its response ended; `dropped`: the client closed it first. */
  kind: 'request' | 'answered' | 'dropped';
  /** Each message of the POST: its method (or `response`), with `#id` and, for a cancel, `requestId`. */
  messages: { method: string; id?: unknown; requestId?: unknown }[];
}

/**
 * A proxy on 127.0.0.1 in front of `target` that records every POST and how its response ended, so a test can
 * tell a closed response stream from a `notifications/cancelled` on the wire, not only from the server's counters.
 */
export async function recordingProxy(target: URL): Promise<{ url: URL; events: WireEvent[]; close(): Promise<void> }> {
  const events: WireEvent[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const messages: WireEvent['messages'] = [];
      try {
        const parsed = JSON.parse(body.toString('utf8')) as unknown;
        for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as {
          method?: string;
          id?: unknown;
          params?: { requestId?: unknown };
        }[]) {
          messages.push({
            method: m.method ?? 'response',
            ...(m.id !== undefined && { id: m.id }),
            ...(m.params?.requestId !== undefined && { requestId: m.params.requestId }),
          });
        }
      } catch {
        // not JSON (a GET or DELETE): recorded with no messages
      }
      if (req.method === 'POST') events.push({ kind: 'request', messages });
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => {
        if (req.method === 'POST') events.push({ kind: res.writableFinished ? 'answered' : 'dropped', messages });
        // The client went away first: so does the stream to the server, as if there were no proxy.
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: new URL(`http://127.0.0.1:${port}${target.pathname}`),
    events,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
