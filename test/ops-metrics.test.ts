/**
 * Health and metrics over the real wire: /healthz, /readyz and /metrics on
 * HTTP serve (outside MCP auth unless --health-auth), on stdio serve and a
 * worker host with --health-port, and a real Prometheus scraping 127.0.0.1
 * and answering a query on a counter after known traffic.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib/free-port.js';
import { httpClient, listening, type Started } from './http-helpers.js';
import { stdioClient, stopChild, until, type WiredClient } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { frontEnd, startHost, type HostProcess } from './remote-helpers.js';
import { modernHttp } from './modern-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; type: string }> {
  const r = await fetch(url, { headers });
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') ?? '' };
}

/** The value of one sample line of the text format (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** Waits for one progress report, then aborts the call (it has reached its worker). */
function cancelOnFirstProgress(
  run: (signal: AbortSignal, onprogress: () => void) => Promise<unknown>,
): Promise<unknown> {
  const controller = new AbortController();
  return run(controller.signal, () => controller.abort('test cancels')).catch((e: unknown) => e);
}

describe('HTTP serve: /healthz, /readyz, /metrics and a real Prometheus', () => {
  let server: Listening;
  let base: string;
  let prometheus: ChildProcess | undefined;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--spare-threads', '1', '--grace-ms', '200']);
    base = server.url.origin;
  }, 60_000);
  afterAll(async () => {
    if (prometheus) await stopChild(prometheus);
    await server?.stop();
  });

  it('answers health and readiness without MCP, and counts known traffic by tool, outcome and source', async () => {
    expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, text: 'ok\n' });
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, text: 'ready\n' });
    const { client } = await httpClient(server.url);
    for (let i = 0; i < 3; i++)
      expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    // A cooperative spin cancelled by notifications/cancelled once it reports progress: stopped at a checkpoint.
    await cancelOnFirstProgress((signal, onprogress) =>
      client.callTool({ name: 'spin', arguments: { ms: 30_000 } }, undefined, { signal, onprogress }),
    );
    // One that never checks: the cancel ends in a hard stop after --grace-ms.
    await cancelOnFirstProgress((signal, onprogress) =>
      client.callTool({ name: 'spin', arguments: { ms: 30_000, cooperative: false } }, undefined, {
        signal,
        onprogress,
      }),
    );

    let text = '';
    await until(
      async () => {
        text = (await get(`${base}/metrics`)).text;
        return (
          sample(text, 'mcp_cancel_pool_hard_stops_total', { role: 'front' }) === 1 &&
          sample(text, 'mcp_cancel_pool_cancel_to_stopped_seconds_count', {}) === 2
        );
      },
      30_000,
      'the hard stop and both stops in the metrics',
    );
    expect(sample(text, 'mcp_cancel_pool_calls_total', { role: 'front', tool: 'spin', outcome: 'completed' })).toBe(3);
    expect(sample(text, 'mcp_cancel_pool_calls_total', { tool: 'spin', outcome: 'cancelled' })).toBe(2);
    expect(sample(text, 'mcp_cancel_pool_cancels_total', { source: 'notification' })).toBe(2);
    expect(sample(text, 'mcp_cancel_pool_queue_wait_seconds_count', {})).toBe(5);
    expect(sample(text, 'mcp_cancel_pool_run_seconds_count', {})).toBe(5);
    expect(sample(text, 'mcp_cancel_pool_threads', {})).toBe(2);
    expect(sample(text, 'mcp_cancel_pool_sessions', {})).toBe(1);
    expect(sample(text, 'mcp_cancel_pool_running', {})).toBe(0);
    expect(sample(text, 'mcp_cancel_pool_queue_refusals_total', {})).toBe(0);
    expect(sample(text, 'mcp_cancel_pool_cancels_ignored_total', { reason: 'late' })).toBe(0);
    expect(text).toContain('# TYPE mcp_cancel_pool_cancel_to_slot_reused_seconds histogram');
    await client.close();
  }, 90_000);

  it('a real Prometheus scrapes it and answers a query on a counter, and the queries of docs/operations.md', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
    const port = await freePort();
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mcp\n    static_configs:\n      - targets: ['127.0.0.1:${server.url.port}']\n`,
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const query = async (q: string) => {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(
        () => undefined,
      );
      return r?.ok
        ? ((await r.json()) as {
            status: string;
            data: { result: { metric: Record<string, string>; value: [number, string] }[] };
          })
        : undefined;
    };
    let completed: string | undefined;
    await until(
      async () => {
        const r = await query('mcp_cancel_pool_calls_total{tool="spin",outcome="completed"}');
        completed = r?.data.result[0]?.value[1];
        return completed !== undefined;
      },
      60_000,
      'Prometheus to scrape the server',
    );
    expect(completed).toBe('3');
    const hard = await query('sum(mcp_cancel_pool_hard_stops_total)');
    expect(hard?.data.result[0]?.value[1]).toBe('1');
    // The queries docs/operations.md shows (its promql block, comments aside) must at least parse and run.
    const page = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    const shown = (/```promql\n([^`]*)```/.exec(page)?.[1] ?? '')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(shown).toHaveLength(2);
    for (const q of shown) {
      expect((await query(q))?.status, q).toBe('success');
    }
  }, 90_000);
});

describe('--health-auth and the MCP token', () => {
  const TOKEN = 'health-test-token-0123456789abcdef';
  let file: string;
  beforeAll(() => {
    file = join(mkdtempSync(join(tmpdir(), 'token-')), 'token');
    writeFileSync(file, TOKEN);
  });

  it('health and metrics stay outside MCP auth by default, and need the token with --health-auth', async () => {
    const open = await listening(['--threads', '1', '--auth-token-file', file]);
    try {
      expect((await get(`${open.url.origin}/healthz`)).status).toBe(200);
      expect((await get(`${open.url.origin}/metrics`)).status).toBe(200);
      expect((await fetch(open.url, { method: 'POST', body: '{}' })).status).toBe(401); // MCP itself still needs it
    } finally {
      await open.stop();
    }
    const closed = await listening(['--threads', '1', '--auth-token-file', file, '--health-auth']);
    try {
      expect((await get(`${closed.url.origin}/metrics`)).status).toBe(401);
      expect((await get(`${closed.url.origin}/readyz`)).status).toBe(401);
      const ok = await get(`${closed.url.origin}/metrics`, { authorization: `Bearer ${TOKEN}` });
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('mcp_cancel_pool_calls_total');
      expect(closed.stderr()).not.toContain(TOKEN);
    } finally {
      await closed.stop();
    }
  }, 180_000);
});

describe('--health-port: stdio serve, and a worker host and its front end on Redis', () => {
  let redis: RedisProcess;
  let host: HostProcess | undefined;
  const clients: WiredClient[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await host?.stop();
    await redis?.stop();
  });

  const healthUrl = (stderr: string) => /health and metrics on (http:\/\/\S+)\/healthz/.exec(stderr)?.[1];

  it('stdio serve answers on its health port while stdout stays JSON-RPC', async () => {
    const w = await stdioClient(['--threads', '1', '--health-port', '0']);
    clients.push(w);
    let err = '';
    w.transport.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await until(() => healthUrl(err) !== undefined, 60_000, 'the health line');
    const url = healthUrl(err)!;
    expect((await w.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    expect(await get(`${url}/readyz`)).toMatchObject({ status: 200 });
    const text = (await get(`${url}/metrics`)).text;
    expect(sample(text, 'mcp_cancel_pool_calls_total', { role: 'front', tool: 'spin', outcome: 'completed' })).toBe(1);
    // Something can scrape this one, so it has the process metrics too (prom-client's event-loop lag and GC among them).
    expect(text).toContain('# TYPE mcp_cancel_pool_nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE mcp_cancel_pool_nodejs_gc_duration_seconds histogram');
    expect((await get(`${url}/mcp`)).status).toBe(404);
  }, 120_000);

  it('an idle stdio serve that nothing can scrape sleeps: its main thread wakes at most a few times a second', async () => {
    // The process metrics' event-loop monitor alone wakes a process 100 times a second; nothing could read it here.
    const w = await stdioClient(['--threads', '1']);
    clients.push(w);
    expect((await w.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    const pid = w.transport.pid!;
    const wakeUps = () =>
      Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8'))![1]);
    // A loaded machine only delays timers, so it can only lower this count, never raise it.
    const before = wakeUps();
    await new Promise((r) => setTimeout(r, 2000));
    expect(wakeUps() - before).toBeLessThan(20);
  }, 120_000);

  it('a front end on Redis is not ready until a worker host is alive; the host reports the same names as role worker', async () => {
    const Q = 'ops-health';
    const w = await stdioClient(['--redis', redis.url, '--queue', Q, '--health-port', '0']);
    clients.push(w);
    let err = '';
    w.transport.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await until(() => healthUrl(err) !== undefined, 60_000, 'the front end health line');
    const front = healthUrl(err)!;
    let r = await get(`${front}/readyz`);
    await until(
      async () => !(r = await get(`${front}/readyz`)).text.startsWith('not ready: Redis is not connected'),
      60_000,
      'Redis connected',
    );
    expect(r).toMatchObject({ status: 503, text: 'not ready: no worker host is alive on the queue\n' });

    host = await startHost(redis.url, Q, ['--threads', '1', '--health-port', '0']);
    await until(() => healthUrl(host!.stderr()) !== undefined, 60_000, 'the host health line');
    const hostUrl = healthUrl(host.stderr())!;
    await until(async () => (await get(`${front}/readyz`)).status === 200, 60_000, 'the front end ready');
    // The host's own probe of Redis may connect a moment after its liveness key made the front end ready.
    await until(async () => (await get(`${hostUrl}/readyz`)).status === 200, 60_000, 'the host ready');
    const f = await frontEnd(redis.url, Q, []); // a second front end, to carry traffic through the host
    clients.push(f);
    expect((await f.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    await until(
      async () =>
        (sample((await get(`${hostUrl}/metrics`)).text, 'mcp_cancel_pool_calls_total', {
          role: 'worker',
          tool: 'spin',
          outcome: 'completed',
        }) ?? 0) >= 2,
      60_000,
      'the host counting the calls',
    );
    const text = (await get(`${front}/metrics`)).text;
    expect(sample(text, 'mcp_cancel_pool_worker_hosts', { role: 'front' })).toBe(1);
    expect((await get(`${hostUrl}/metrics`)).text).toContain('mcp_cancel_pool_queue_wait_seconds_count{role="worker"}');
  }, 240_000);
});

describe('cancel sources: how each era and transport ends a call is counted by what it was', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--spare-threads', '1']);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('a 2026 closed response stream counts closed_stream; a 2025 session ended with a call running counts session_close', async () => {
    const modern = await modernHttp(server.url);
    await cancelOnFirstProgress((signal, onprogress) =>
      modern.client.callTool({ name: 'spin', arguments: { ms: 30_000 } }, { signal, onprogress }),
    );
    await modern.close();

    const { client, transport } = await httpClient(server.url);
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const call = client
      .callTool({ name: 'spin', arguments: { ms: 30_000 } }, undefined, { onprogress: () => running() })
      .catch((e: unknown) => e);
    await started;
    await transport.terminateSession(); // DELETE: the session ends with the call in it
    await client.close();
    await call;

    let text = '';
    await until(
      async () => {
        text = (await get(`${server.url.origin}/metrics`)).text;
        return sample(text, 'mcp_cancel_pool_calls_total', { tool: 'spin', outcome: 'cancelled' }) === 2;
      },
      60_000,
      'both calls counted cancelled',
    );
    expect(sample(text, 'mcp_cancel_pool_cancels_total', { source: 'closed_stream' })).toBe(1);
    expect(sample(text, 'mcp_cancel_pool_cancels_total', { source: 'session_close' })).toBe(1);
    expect(sample(text, 'mcp_cancel_pool_cancels_total', { source: 'notification' }) ?? 0).toBe(0);
  }, 120_000);
});
