/**
 * Redis failing over under Sentinel (one primary, one replica, three
 * sentinels), a front end and two worker hosts connected through the
 * sentinels, and a steady stream of calls, about half of them cancelled at
 * random times. Twice: a `SENTINEL FAILOVER`, then a SIGKILL of the primary.
 * Each time: every call owed an answer gets exactly one (a result or a tool
 * error), a call whose cancel was accepted gets nothing, and new calls work
 * again; how long after the trigger they do is measured and printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../bench/lib/rng.js';
import { lines, run } from './cli-helpers.js';
import { CLI, sleep, until, type RawServer } from './helpers.js';
import { call, cancel, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';
import { MASTER, startSentinelSet, type SentinelSet } from './sentinel-helpers.js';

const Q = 'sentinel';
const PW = 'Primary-secret-4711';
const SPW = 'Sentinel-secret-0815';
/** New calls must work again within this after the trigger: a bound on a hang, not a speed target (the measured figure is printed). */
const RECOVERY_BOUND_MS = 60_000;
const ENV = ['MCP_CANCEL_POOL_REDIS_URL', 'MCP_CANCEL_POOL_REDIS_SENTINEL_PASSWORD'] as const;

let set: SentinelSet;
let dir: string;
let front: RawServer;
let hosts: HostProcess[] = [];
const saved = ENV.map((name) => process.env[name]);

beforeAll(async () => {
  set = await startSentinelSet(PW, SPW);
  await set.settled(1);
  dir = mkdtempSync(join(tmpdir(), 'mcp-sentinel-secrets-'));
  writeFileSync(join(dir, 'url'), `redis://:${PW}@primary\n`);
  writeFileSync(join(dir, 'sentinel-pw'), `${SPW}\n`);
  // The hosts read the secrets from files, the front end from the environment: both ways stay out of argv.
  const viaFiles = [
    '--redis-sentinels',
    set.sentinelList,
    '--redis-sentinel-name',
    MASTER,
    '--redis-url-file',
    join(dir, 'url'),
    '--redis-sentinel-password-file',
    join(dir, 'sentinel-pw'),
  ];
  hosts = await Promise.all([startHost(viaFiles, Q, ['--threads', '1']), startHost(viaFiles, Q, ['--threads', '1'])]);
  process.env.MCP_CANCEL_POOL_REDIS_URL = `redis://:${PW}@primary`;
  process.env.MCP_CANCEL_POOL_REDIS_SENTINEL_PASSWORD = SPW;
  front = await rawFrontEnd(['--redis-sentinels', set.sentinelList], Q);
}, 90_000);
afterAll(async () => {
  ENV.forEach((name, k) => (saved[k] === undefined ? delete process.env[name] : (process.env[name] = saved[k])));
  front?.kill();
  await Promise.all(hosts.map((h) => h.kill()));
  await set?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What one failover under load came to. */
interface Run {
  readonly calls: number;
  readonly completed: number;
  readonly cancelled: number;
  readonly failed: number;
  /** The tool errors the failed calls got, by kind (numbers blanked), with how many got each. */
  readonly errors: Record<string, number>;
  /** Trigger → the sentinels name another primary. */
  readonly switchMs: number;
  /** Trigger → the first call sent after the switch answered with a result. */
  readonly recoveryMs: number;
}

/**
 * Streams calls (half cancelled at random) while `trigger` fails Redis over,
 * probes with one plain call after another until one sent after the switch
 * succeeds, then checks every call's answers against the front end's counts.
 */
async function failoverUnderLoad(label: string, seed: number, trigger: () => Promise<void>): Promise<Run> {
  const rand = rng(seed);
  // The counts below are differences: a call of an earlier test still settling would be counted here.
  await until(async () => (await front.stats()).inFlight === 0, 60_000, "the earlier tests' calls settled");
  const before = await front.stats();
  const oldPrimary = await set.primaryPort();
  const ids: string[] = [];
  const cancelSent = new Set<string>();
  const cancels: Promise<void>[] = [];
  let streaming = true;
  const stream = (async () => {
    for (let i = 0; streaming && i < 4000; i++) {
      const id = `${label}-${i}`;
      ids.push(id);
      call(front, id, 'spin', { ms: Math.floor(rand() * 40), stageMs: 1 });
      if (rand() < 0.5) {
        cancelSent.add(id);
        cancels.push(sleep(Math.floor(rand() * 60)).then(() => cancel(front, id)));
      }
      await sleep(25);
    }
  })();
  await sleep(2000); // the stream is under way
  const t0 = Date.now();
  await trigger();
  let switchMs = -1;
  let recoveryMs = -1;
  let lastAnswer = '';
  for (let k = 0; recoveryMs < 0; k++) {
    const switched = switchMs >= 0 || (await set.primaryPort().catch(() => oldPrimary)) !== oldPrimary;
    if (switched && switchMs < 0) switchMs = Date.now() - t0;
    const id = `${label}-probe-${k}`;
    ids.push(id);
    call(front, id, 'spin', { ms: 0 });
    const answer = (await answerOf(id, RECOVERY_BOUND_MS)) as {
      result?: { isError?: boolean; content?: { text?: string }[] };
      error?: unknown;
    };
    lastAnswer = JSON.stringify(answer.result?.content ?? answer.error);
    if (switched && answer.result !== undefined && answer.result.isError !== true) recoveryMs = Date.now() - t0;
    else await sleep(100);
    if (Date.now() - t0 > RECOVERY_BOUND_MS) break;
  }
  if (recoveryMs < 0) {
    const tail = (t: string) => t.split('\n').slice(-8).join('\n');
    throw new Error(
      `${label}: no call worked for ${RECOVERY_BOUND_MS} ms after the trigger (seed ${seed}); last answer ${lastAnswer}; front end: ${tail(front.stderr)}; hosts: ${hosts.map((h) => tail(h.stderr())).join(' | ')}; Redis ${JSON.stringify(await redisPicture().catch(String))}`,
    );
  }
  await sleep(1000); // a little more of the stream on the new primary
  streaming = false;
  await stream;
  await Promise.all(cancels);
  await until(
    async () => {
      const s = await front.stats();
      return (
        s.inFlight === 0 &&
        s.completed! + s.cancelled! + s.failed! - before.completed! - before.cancelled! - before.failed! === ids.length
      );
    },
    60_000,
    `every ${label} call settled (seed ${seed})`,
  ).catch(async (error: Error) => {
    throw new Error(
      `${error.message}: front end ${JSON.stringify(await front.stats())}; Redis ${JSON.stringify(await redisPicture())}; unanswered ${ids.filter((id) => !cancelSent.has(id) && responsesFor(front, id).length === 0).join(' ')}`,
    );
  });
  await sleep(1500); // anything wrongly sent late would arrive by now
  const after = await front.stats();
  const completed = after.completed! - before.completed!;
  const cancelled = after.cancelled! - before.cancelled!;
  const failed = after.failed! - before.failed!;
  let answered = 0;
  const errors: Record<string, number> = {};
  for (const id of ids) {
    const answers = responsesFor(front, id) as {
      result?: { isError?: boolean; content?: { text?: string }[] };
      error?: { message?: string };
    }[];
    const n = answers.length;
    for (const a of answers) {
      const text = a.error?.message ?? (a.result?.isError === true ? a.result.content?.[0]?.text : undefined);
      if (text !== undefined) {
        const kind = text.replace(/\d+/g, 'N').slice(0, 140);
        errors[kind] = (errors[kind] ?? 0) + 1;
      }
    }
    expect(n, `${id} (seed ${seed})`).toBeLessThanOrEqual(1); // never two answers
    if (!cancelSent.has(id)) expect(n, `${id}: never cancelled, so an answer is owed (seed ${seed})`).toBe(1);
    answered += n;
  }
  // Exactly the completed and failed calls were answered: nothing for a call whose cancel won.
  expect(answered, `seed ${seed}`).toBe(completed + failed);
  expect(cancelled, `seed ${seed}`).toBe(ids.length - answered);
  expect(completed, `seed ${seed}`).toBeGreaterThan(0);
  expect(cancelled, `seed ${seed}`).toBeGreaterThan(0);
  expect(switchMs, `${label}: the sentinels named a new primary (seed ${seed})`).toBeGreaterThanOrEqual(0);
  expect(recoveryMs, `${label}: new calls work again (seed ${seed})`).toBeGreaterThan(0);
  expect(recoveryMs).toBeLessThan(RECOVERY_BOUND_MS);
  // Every failure was answered as an error: the answered calls are the completed ones plus one error each.
  expect(
    Object.values(errors).reduce((a, b) => a + b, 0),
    `seed ${seed}`,
  ).toBe(failed);
  return { calls: ids.length, completed, cancelled, failed, errors, switchMs, recoveryMs };
}

/** The job states and BullMQ lists on the primary, for a failure's message. */
async function redisPicture(): Promise<Record<string, unknown>> {
  const r = set.client();
  const states: Record<string, number> = {};
  for (const key of await r.keys(`mcp:${Q}:job:*`)) {
    const s = (await r.hget(key, 's')) ?? 'none';
    states[s] = (states[s] ?? 0) + 1;
  }
  return {
    states,
    wait: await r.llen(`bull:${Q}:wait`),
    active: await r.llen(`bull:${Q}:active`),
    hosts: await r.keys(`mcp:${Q}:host:*`),
  };
}

/** Waits for the answer to `id`; on a timeout, says what the front end, the hosts, Redis and the sentinels were doing. */
async function answerOf(id: string, ms: number): Promise<Record<string, unknown>> {
  try {
    return await front.next((m) => m.id === id, ms);
  } catch (error) {
    const tail = (t: string) => t.split('\n').slice(-8).join('\n');
    const stats = await front.stats().catch(String);
    throw new Error(
      `no answer to ${id} within ${ms} ms; front end ${JSON.stringify(stats)}: ${tail(front.stderr)}; hosts: ${hosts.map((h) => tail(h.stderr())).join(' | ')}; primary per sentinels ${await set.primaryPort().catch(String)} of ${set.dataPorts.join(',')}; Redis ${JSON.stringify(await redisPicture().catch(String))}`,
      { cause: error },
    );
  }
}

function secretsNowhere(): void {
  const texts = [front.stderr, JSON.stringify(front.lines), ...hosts.map((h) => h.stderr())];
  for (const text of texts) {
    expect(text.includes(PW)).toBe(false);
    expect(text.includes(SPW)).toBe(false);
  }
}

it('a job state whose BullMQ job a failover lost (the two writes go on different connections): the call gets its owed error, not a wait forever', async () => {
  const r = set.client();
  const states = async (want: string) => {
    const found: string[] = [];
    for (const key of await r.keys(`mcp:${Q}:job:*`))
      if ((await r.hget(key, 's')) === want) found.push(key.slice(`mcp:${Q}:job:`.length));
    return found;
  };
  // Both hosts (one thread each) busy, so the next call stays queued.
  call(front, 'busy-1', 'spin', { ms: 20_000, stageMs: 1 });
  call(front, 'busy-2', 'spin', { ms: 20_000, stageMs: 1 });
  await until(async () => (await states('running')).length === 2, 20_000, 'both hosts running');
  call(front, 'lost', 'spin', { ms: 0 });
  let jobId = '';
  await until(async () => ((jobId = (await states('queued'))[0] ?? ''), jobId !== ''), 10_000, 'the call queued');
  // The state is written before BullMQ's add, on another connection: delete the job only once it is there, or the add lands after.
  await until(
    async () => (await r.lpos(`bull:${Q}:wait`, jobId)) !== null,
    10_000,
    "the call's job in BullMQ's wait list",
  );
  // What a failover that kept the state but lost BullMQ's add leaves: the state, and no job.
  await r.lrem(`bull:${Q}:wait`, 0, jobId);
  await r.del(`bull:${Q}:${jobId}`);
  let answer: { result?: { isError?: boolean; content: { text: string }[] } };
  try {
    answer = await answerOf('lost', 30_000);
  } finally {
    // Whatever happened, the hosts are freed for the next test.
    cancel(front, 'busy-1');
    cancel(front, 'busy-2');
  }
  expect(answer.result?.isError).toBe(true);
  expect(answer.result?.content[0]?.text).toMatch(/job is gone from the queue in Redis/);
  await until(async () => (await front.stats()).inFlight === 0, 20_000, 'the busy calls cancelled');
  await sleep(1000);
  expect(responsesFor(front, 'busy-1')).toEqual([]);
  expect(responsesFor(front, 'busy-2')).toEqual([]);
  expect(responsesFor(front, 'lost')).toHaveLength(1);
}, 60_000);

it('a SENTINEL FAILOVER under a stream of calls, half cancelled: one answer for each call owed one, none after an accepted cancel', async () => {
  const seed = Number(process.env.SENTINEL_SEED ?? Date.now() % 100_000);
  const run = await failoverUnderLoad('fo', seed, () => set.failover());
  console.log(`sentinel failover (seed ${seed}): ${JSON.stringify(run, null, 1)}`);
  secretsNowhere();
  expect(front.stderr).toMatch(new RegExp(`on Redis ${MASTER} via Sentinel 127\\.0\\.0\\.1:\\d+`));
}, 90_000);

it('a SIGKILL of the primary under a stream of calls, half cancelled: the same, once the sentinels promote the replica', async () => {
  await set.settled(1); // the old primary is the replica now, in sync
  const seed = Number(process.env.SENTINEL_SEED ?? Date.now() % 100_000);
  const run = await failoverUnderLoad('kill', seed, async () => set.kill(await set.primaryPort()));
  console.log(`sentinel primary killed (seed ${seed}): ${JSON.stringify(run, null, 1)}`);
  secretsNowhere();
}, 90_000);

describe('Sentinel flags', () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [CLI, ...args], { ms: 60_000, env });
  /** One line on stderr naming `what`, exit 1, no stack, no secret. */
  const refused = async (args: string[], what: RegExp) => {
    const r = await cli(args);
    expect(r.code).toBe(1);
    expect(lines(r.stderr), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(what);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr.includes(PW)).toBe(false);
  };
  it('a bad sentinel address, a Sentinel flag without --redis-sentinels, and TLS through Sentinel are each refused in one line', async () => {
    await refused(
      ['worker', '--redis-sentinels', '127.0.0.1:notaport'],
      /--redis-sentinels: not a host:port: "127\.0\.0\.1:notaport"/,
    );
    await refused(
      ['serve', '--redis-sentinel-name', MASTER],
      /--redis-sentinel-name applies with --redis-sentinels only/,
    );
    await refused(
      ['worker', '--redis', `rediss://:${PW}@primary`, '--redis-sentinels', set.sentinelList],
      /TLS \(rediss:\/\/\) through Sentinel is not supported/,
    );
  });
  it('a wrong password, of the sentinels or of the primary: exits 1 saying the credentials were refused (not "unreachable"), without the password', async () => {
    const sentinels = {
      MCP_CANCEL_POOL_REDIS_URL: `redis://:${PW}@primary`,
      MCP_CANCEL_POOL_REDIS_SENTINEL_PASSWORD: 'Wrong-sentinel-pw-1',
    };
    const primary = {
      MCP_CANCEL_POOL_REDIS_URL: 'redis://:Wrong-primary-pw-2@primary',
      MCP_CANCEL_POOL_REDIS_SENTINEL_PASSWORD: SPW,
    };
    for (const command of ['worker', 'serve']) {
      for (const env of [sentinels, primary]) {
        const r = await cli([command, '--redis-sentinels', set.sentinelList, '--queue', Q], env);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/refused the credentials/);
        expect(r.stderr).not.toMatch(/unreachable/);
        for (const secret of [...Object.values(env), PW, SPW]) expect(r.stderr.includes(secret)).toBe(false);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    }
  }, 150_000);
});
