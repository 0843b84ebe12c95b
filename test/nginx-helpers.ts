/**
 * A real nginx (Debian package) in front of several HTTP front ends, run as
 * the current user from a temp dir (its own config, pid file, logs and temp
 * paths; `daemon off`), torn down after. The config is docs/many-hosts.md's "Many
 * hosts" one: round robin for 2026 requests (no session), and a 2025
 * session routed by the front-end prefix of its id. A machine without nginx
 * fails here, loudly, with the install line (never a skip).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../bench/lib/free-port.js';

export const INSTALL_NGINX = 'apt-get update && apt-get install -y nginx';

/** A running nginx. */
export interface NginxProcess {
  /** The MCP endpoint through nginx. */
  readonly url: URL;
  /** Its error log so far (for a failing test's message). */
  errors(): string;
  /**
   * Each proxied request so far, in order: the request's `x-test-rpc` header
   * (a test's client may tag its requests, e.g. with the JSON-RPC method; `-`
   * if none) and the front end that served it (`host:port`).
   */
  routes(): { readonly rpc: string; readonly upstream: string }[];
  stop(): Promise<void>;
}

/** The `http` block's MCP part: `fronts` maps each session prefix to its front end's `host:port`. */
export function mcpNginxConfig(fronts: Record<string, string>, listen: string): string {
  const names = Object.keys(fronts);
  return `
  # Every front end, for requests without a session (2026-07-28; and 2025 initialize).
  upstream mcp_any {
${names.map((n) => `    server ${fronts[n]};`).join('\n')}
  }
${names.map((n) => `  upstream mcp_${n} { server ${fronts[n]}; }`).join('\n')}
  # A 2025 session lives on the front end that created it: its id starts with that front end's --session-prefix.
  map $http_mcp_session_id $mcp_upstream {
    default mcp_any;
${names.map((n) => `    "~^${n}\\." mcp_${n};`).join('\n')}
  }
  server {
    listen ${listen};
    location /mcp {
      proxy_pass http://$mcp_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      # SSE: every event leaves as it is written; a long call may stay silent for a while.
      proxy_buffering off;
      proxy_read_timeout 1h;
      # A client that drops its stream drops the front end's too: that is a 2026 request's cancel.
      proxy_ignore_client_abort off;
    }
  }`;
}

/** Starts nginx on a free 127.0.0.1 port in front of `fronts` (prefix → `host:port`). */
export async function startNginx(fronts: Record<string, string>): Promise<NginxProcess> {
  if (spawnSync('nginx', ['-v']).error)
    throw new Error(`nginx is not installed; the load-balancer test needs it: ${INSTALL_NGINX}`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  log_format mcp_route '$http_x_test_rpc $upstream_addr';
  access_log ${dir}/access.log;
  access_log ${dir}/routes.log mcp_route;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${mcpNginxConfig(fronts, `127.0.0.1:${port}`)}
}
`,
  );
  let stderr = '';
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const errors = () => {
    try {
      return stderr + readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return stderr;
    }
  };
  const end = Date.now() + 15_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`nginx did not start: ${errors()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    errors,
    routes() {
      let text = '';
      try {
        text = readFileSync(join(dir, 'routes.log'), 'utf8');
      } catch {
        // nothing proxied yet
      }
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [rpc = '-', upstream = '-'] = line.split(' ');
          return { rpc, upstream };
        });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
