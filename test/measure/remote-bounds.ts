/**
 * Measures the multi-host bounds docs/many-hosts.md "Many hosts" states (one run each, real processes, a real
 * redis-server). Not part of `npm test` (it asserts no timing): run it with
 * `npm run build && npx vitest run -c vitest.measure.config.ts`.
 */
import { it } from 'vitest';
import { sleep, until } from '../helpers.js';
import { startRedis } from '../redis-helpers.js';
import { call, rawFrontEnd, startHost } from '../remote-helpers.js';

const poll = async (check: () => Promise<boolean>, ms = 60_000) => {
  const t = Date.now();
  await until(check, ms, 'x');
  return Date.now() - t;
};

it('measures the remote bounds', async () => {
  const redis = await startRedis();
  let r = redis.client();
  const out: string[] = [];
  // 1. front end SIGKILLed: host cancels its job as an orphan
  {
    const h = await startHost(redis.url, 'm1', ['--threads', '1']);
    const f = await rawFrontEnd(redis.url, 'm1');
    call(f, 'a', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await h.stats(r)).running ?? 0) === 1, 20_000);
    f.kill();
    const t = await poll(async () => ((await h.stats(r)).orphansCancelled ?? 0) === 1);
    out.push(`front end SIGKILL -> its job cancelled on the host: ${t} ms`);
    await h.kill();
  }
  // 2. host SIGKILLed with another host: retaken; 3. without: error
  {
    const a = await startHost(redis.url, 'm2', ['--threads', '1']);
    const f = await rawFrontEnd(redis.url, 'm2');
    call(f, 'b', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await a.stats(r)).running ?? 0) === 1, 20_000);
    const b = await startHost(redis.url, 'm2', ['--threads', '1']);
    await a.kill();
    const t = await poll(async () => ((await b.stats(r)).running ?? 0) === 1);
    out.push(`host SIGKILL mid-job -> another host runs it again: ${t} ms`);
    await b.kill();
    const t0 = Date.now();
    await f.next((m) => m.id === 'b', 60_000);
    out.push(`last host SIGKILL mid-job -> the front end answers with an error: ${Date.now() - t0} ms`);
    f.kill();
  }
  // 4. Redis restart without persistence: front end answers, host stops the job
  {
    const h = await startHost(redis.url, 'm4', ['--threads', '1']);
    const f = await rawFrontEnd(redis.url, 'm4');
    call(f, 'c', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await h.stats(r)).running ?? 0) === 1, 20_000);
    await redis.kill();
    await redis.restart();
    r = redis.client();
    const t0 = Date.now();
    const stop = poll(async () => ((await h.stats(r)).stateLost ?? 0) === 1);
    await f.next((m) => m.id === 'c', 60_000);
    out.push(
      `Redis restart (no persistence) -> the front end answers the running call with an error: ${Date.now() - t0} ms`,
    );
    out.push(`Redis restart -> the host stops the job whose state is gone: ${await stop} ms`);
    const t1 = Date.now();
    let n = 0;
    await until(async () => {
      const id = `n${n++}`;
      call(f, id, 'spin', { ms: 1 });
      const m = await f.next((x) => x.id === id, 10_000);
      return (m.result as { isError?: boolean }).isError !== true;
    }, 30_000);
    out.push(`Redis restart -> new calls answered again: within ${Date.now() - t1} ms of the restart being up`);
    f.kill();
    await h.kill();
  }
  // 5. drain deadline
  {
    const a = await startHost(redis.url, 'm5', ['--threads', '1', '--drain-timeout-ms', '2000']);
    const f = await rawFrontEnd(redis.url, 'm5');
    call(f, 'd', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await a.stats(r)).running ?? 0) === 1, 20_000);
    const b = await startHost(redis.url, 'm5', ['--threads', '1']);
    const t0 = Date.now();
    const exited = new Promise((res) => a.child.once('exit', res));
    a.child.kill('SIGTERM');
    await exited;
    out.push(`SIGTERM with --drain-timeout-ms 2000 and a job running -> host exits: ${Date.now() - t0} ms`);
    const t = await poll(async () => ((await b.stats(r)).running ?? 0) === 1);
    out.push(
      `  -> the other host runs the handed-back job: ${Date.now() - t0} ms after the SIGTERM (${t} ms after the exit)`,
    );
    f.kill();
    await b.kill();
  }
  // 6. no host: a queued call fails
  {
    const h = await startHost(redis.url, 'm6', ['--threads', '1']);
    const f = await rawFrontEnd(redis.url, 'm6');
    await h.stop();
    const t0 = Date.now();
    call(f, 'e', 'spin', { ms: 1 });
    await f.next((m) => m.id === 'e', 60_000);
    out.push(`no live host (last one stopped cleanly) -> a call sent then fails: ${Date.now() - t0} ms`);
    f.kill();
  }
  console.log(out.join('\n'));
  await sleep(100);
  await redis.stop();
}, 400_000);
