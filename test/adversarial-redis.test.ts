/**
 * Issue 64, defect 5: `/readyz` and `/metrics` never block on Redis. With redis-server SIGSTOPped (its connections
 * open, nothing answered), both answer while it is still stopped, `/readyz` saying "not ready" and why; once it is
 * continued, ready again. The front end is a real `serve --transport http --redis` subprocess with a worker host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listening, type Started } from './http-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const Q = 'adversarial-redis';
let redis: RedisProcess;
let host: HostProcess;
let front: Extract<Started, { kind: 'listening' }>;
beforeAll(async () => {
  redis = await startRedis();
  host = await startHost(redis.url, Q);
  front = await listening(['--redis', redis.url, '--queue', Q]);
}, 60_000);
afterAll(async () => {
  redis?.child.kill('SIGCONT');
  await front?.stop();
  await host?.kill();
  await redis?.stop();
});

/** A GET that must be answered: 15 s bounds a hang (the stall itself lasts until the test ends it). */
async function get(path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(new URL(path, front.url), { signal: AbortSignal.timeout(15_000) });
  return { status: r.status, text: await r.text() };
}

describe('health while Redis stalls (issue 64)', () => {
  it('with redis-server stopped, /readyz answers "not ready" and why, /metrics answers, and both recover after it continues', async () => {
    await expect.poll(async () => (await get('/readyz')).status, { timeout: 30_000, interval: 200 }).toBe(200);
    redis.child.kill('SIGSTOP');
    try {
      // Every answer below arrives while Redis is still stopped: none waited on it.
      await expect
        .poll(async () => (await get('/readyz')).text, { timeout: 30_000, interval: 200 })
        .toMatch(/^not ready: Redis did not answer within \d+ ms/);
      const ready = await get('/readyz');
      expect(ready.status).toBe(503);
      const metrics = await get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/^mcp_cancel_pool_/m);
      expect(metrics.text).not.toMatch(/worker_hosts(\{[^}]*\})? 1/); // not counted while Redis does not answer
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      redis.child.kill('SIGCONT');
    }
    await expect.poll(async () => (await get('/readyz')).status, { timeout: 30_000, interval: 200 }).toBe(200);
    expect((await get('/metrics')).text).toMatch(/worker_hosts(\{[^}]*\})? 1/);
  }, 90_000);
});
