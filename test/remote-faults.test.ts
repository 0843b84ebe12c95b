/**
 * Faults across hosts, each with real processes and a real redis-server:
 * a worker host SIGKILLed mid-job (retried on another host, or a clear error
 * when none is left), a front end that dies, a tool a host has not loaded,
 * Redis going away and coming back. Nothing lost, nothing answered twice.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { sleep, until, type RawServer } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, leftovers, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';
import { FRONT_LIVENESS_TTL_MS, HOST_LIVENESS_TTL_MS } from '../dist/src/remote/liveness.js';

// Liveness bounds, 10x the figure each wait expects, so a busy machine cannot fail them: a dead host's job is
// taken over once its liveness key expires (HOST_LIVENESS_TTL_MS); a dead front end's jobs are cancelled once
// its key expires plus the hosts' check and the counters' refresh (1 s each).
const HOST_GONE_LIVENESS_BOUND_MS = 10 * HOST_LIVENESS_TTL_MS;
const FRONT_GONE_LIVENESS_BOUND_MS = 10 * (FRONT_LIVENESS_TTL_MS + 2000);

const Q = 'faults';
const REPORT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/report-tools.js', import.meta.url));
let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
const fronts: RawServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  hosts.push(
    ...(await Promise.all([startHost(redis.url, Q, ['--threads', '1']), startHost(redis.url, Q, ['--threads', '1'])])),
  );
  fronts.push(await rawFrontEnd(redis.url, Q));
}, 60_000);
afterAll(async () => {
  for (const f of fronts) f.kill();
  await Promise.all(hosts.map((h) => h.kill()));
  await redis?.stop();
});

/** The live host running a job now (its counters refresh every second). */
async function hostRunning(): Promise<HostProcess> {
  let found: HostProcess | undefined;
  await until(
    async () => {
      for (const h of hosts)
        if (h.child.exitCode === null && h.child.signalCode === null && ((await h.stats(r)).running ?? 0) > 0)
          found = h;
      return found !== undefined;
    },
    10_000,
    'a host running the call',
  );
  return found!;
}

function text(m: Record<string, unknown>): string {
  return ((m.result as { content: { text: string }[] }).content[0] ?? { text: '' }).text;
}

describe('faults across hosts', () => {
  it(
    'a worker host SIGKILLed mid-job: the job is retried once on the other host; exactly one answer',
    async () => {
      const a = fronts[0]!;
      call(a, 'k1', 'spin', { ms: 1500, stageMs: 1 });
      const victim = await hostRunning();
      const survivor = hosts.find((h) => h !== victim)!;
      const answeredBefore = (await survivor.stats(r)).answered ?? 0;
      await victim.kill();
      const response = await a.next((m) => m.id === 'k1', HOST_GONE_LIVENESS_BOUND_MS);
      expect(text(response)).toMatch(/^spun 1500 slices/); // ran again, to completion, on the survivor
      await until(
        async () => ((await survivor.stats(r)).answered ?? 0) === answeredBefore + 1,
        5000,
        'the survivor answered it',
      );
      await sleep(2000);
      expect(responsesFor(a, 'k1')).toHaveLength(1);
      hosts.splice(hosts.indexOf(victim), 1);
    },
    HOST_GONE_LIVENESS_BOUND_MS + 30_000,
  );

  it(
    'the last worker host SIGKILLed mid-job: a clear tool error, once; a host that comes later does not run it',
    async () => {
      const a = fronts[0]!;
      call(a, 'k2', 'spin', { ms: 60_000, stageMs: 1 });
      const victim = await hostRunning();
      await victim.kill();
      hosts.splice(hosts.indexOf(victim), 1);
      const response = await a.next((m) => m.id === 'k2', HOST_GONE_LIVENESS_BOUND_MS);
      expect(response.result).toMatchObject({ isError: true });
      expect(text(response)).toMatch(/stopped \(crashed\?\) while running this call, and no other host took it over/);
      // A new host's stalled check puts the job back in the queue; its Redis state (failed) keeps it from running.
      const fresh = await startHost(redis.url, Q, ['--threads', '1']);
      hosts.push(fresh);
      await until(
        async () => ((await fresh.stats(r)).skipped ?? 0) === 1,
        10_000,
        'the new host skipping the failed job',
      );
      expect((await fresh.stats(r)).answered ?? 0).toBe(0);
      expect(responsesFor(a, 'k2')).toHaveLength(1);
    },
    HOST_GONE_LIVENESS_BOUND_MS + 30_000,
  );

  it(
    'a front end that dies: the jobs of its sessions are cancelled on the hosts once its liveness TTL has passed (not before)',
    async () => {
      const doomed = await rawFrontEnd(redis.url, Q);
      call(doomed, 'orphan', 'spin', { ms: 120_000, stageMs: 1 });
      const host = await hostRunning();
      const before = (await host.stats(r)).orphansCancelled ?? 0;
      doomed.kill();
      const killedAt = Date.now();
      await until(
        async () => ((await host.stats(r)).orphansCancelled ?? 0) === before + 1,
        FRONT_GONE_LIVENESS_BOUND_MS,
        'the orphan cancelled',
      );
      await until(async () => (await host.stats(r)).running === 0, 5000, 'the host free again');
      // Not before the front end's liveness TTL (15 s, to outlive ordinary stalls): an order, not a speed (Redis
      // expires the key no earlier than its TTL, however loaded the machine).
      expect(Date.now() - killedAt).toBeGreaterThan(10_000);
    },
    FRONT_GONE_LIVENESS_BOUND_MS + 30_000,
  );

  it('a tool the host has not loaded: a clear error, not a hang', async () => {
    const c = await rawFrontEnd(redis.url, Q, ['--tools', REPORT_TOOLS]);
    fronts.push(c);
    call(c, 'nt', 'final_progress', {});
    const response = await c.next((m) => m.id === 'nt', 10_000);
    expect(response.result).toMatchObject({ isError: true });
    expect(text(response)).toMatch(
      /tool 'final_progress' is not loaded on worker host \S+ \(start it with the same --tools as the front end\)/,
    );
  });

  it('Redis unreachable: new calls fail at once with a clear error, nothing crashes, and calls work again once it is back', async () => {
    const a = fronts[0]!;
    await redis.kill();
    await sleep(300);
    const t0 = Date.now();
    call(a, 'down', 'spin', { ms: 1 });
    const response = await a.next((m) => m.id === 'down', 5000);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(response.result).toMatchObject({ isError: true });
    expect(text(response)).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable: the call was not queued/);
    await sleep(1500);
    expect(a.child.exitCode).toBeNull();
    for (const h of hosts) expect(h.child.exitCode).toBeNull();
    await redis.restart();
    let n = 0;
    await until(
      async () => {
        const id = `back-${n++}`;
        call(a, id, 'spin', { ms: 1 });
        const m = await a.next((x) => x.id === id, 10_000);
        return (m.result as { isError?: boolean }).isError !== true;
      },
      30_000,
      'calls working again',
    );
    const s = await a.stats();
    expect(s.inFlight).toBe(0);
    await until(async () => (await leftovers(r, Q)).jobStates === 0, 30_000, 'no job state left');
  });
});
