/**
 * The cluster key (issue 25, "nobody in Redis but us", its second wall): a
 * stranger with write access to Redis can neither run a tool on a host nor
 * forge an answer. Real front-end and host processes, a real redis-server,
 * and the stranger as a raw Redis and BullMQ client.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import {
  call,
  cancel,
  initializeRaw,
  rawFrontEnd,
  responsesFor,
  startHost,
  type HostProcess,
} from './remote-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-key-'));
const keyFile = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};
const KEY = keyFile('a.key', `${'a1'.repeat(32)}\n`);
const OTHER = keyFile('b.key', `${'b2'.repeat(32)}\n`);
const Q = 'signed';

let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
const fronts: RawServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  hosts.push(await startHost(redis.url, Q, ['--threads', '2', '--cluster-key-file', KEY]));
  fronts.push(await rawFrontEnd(redis.url, Q, ['--cluster-key-file', KEY]));
}, 90_000);
afterAll(async () => {
  for (const f of fronts) f.kill();
  await Promise.all(hosts.map((h) => h.kill()));
  r?.disconnect();
  await redis?.stop();
});

/** Starts a spin call on front end `f` and waits until it runs on a host: its job's hash key, id and front end id. */
async function runningJob(
  f: RawServer,
  id: string,
  args: Record<string, unknown>,
): Promise<{ key: string; jobId: string; front: string | null }> {
  call(f, id, 'spin', args);
  await until(async () => (await f.stats()).running === 1, 30_000, 'the call running');
  for (const key of await r.keys(`mcp:${Q}:job:*`)) {
    if ((await r.hget(key, 's')) === 'running')
      return { key, jobId: key.slice(`mcp:${Q}:job:`.length), front: await r.hget(key, 'f') };
  }
  throw new Error(`call ${id} runs, but no job hash in Redis says running`);
}

const text = (m: Record<string, unknown>) =>
  (m.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text ?? JSON.stringify(m);

/**
 * A host's counters once it holds no job: it writes them in one coalesced write (at most 5 ms late), so the write
 * that shows no job running is the one that counted the last job's end, the last test's included.
 */
async function settledStats(h: { stats(r: Redis): Promise<Record<string, number>> }): Promise<Record<string, number>> {
  let now: Record<string, number> = {};
  await until(
    async () => ((now = await h.stats(r)).running ?? 0) === 0 && (now.active ?? 0) === 0,
    30_000,
    'the host idle',
  );
  return now;
}

describe('a cluster key shared by front ends and hosts', () => {
  it('signed calls work as before, progress included', async () => {
    const f = fronts[0]!;
    call(f, 'ok', 'spin', { ms: 50, stageMs: 10 }, 'p-ok');
    const answer = await f.next((m) => m.id === 'ok', 30_000);
    expect(answer).toHaveProperty('result');
    expect((answer.result as { isError?: boolean }).isError).toBeFalsy();
    expect(
      f.lines.some(
        (m) => (m as { method?: string; params?: { progressToken?: string } }).params?.progressToken === 'p-ok',
      ),
    ).toBe(true);
  });

  it('a job a stranger puts on the queue is refused by the host and never runs', async () => {
    const h = hosts[0]!;
    const before = await h.stats(r);
    const queue = new Queue(Q, { connection: { url: redis.url } });
    try {
      // What a front end would queue, minus the MAC; and one with a MAC made up.
      await queue.add(
        'spin',
        { front: 'stranger', tool: 'spin', args: { ms: 60_000 }, progress: false, liveLogs: false },
        { jobId: 'forged-1' },
      );
      await queue.add(
        'spin',
        { front: 'stranger', tool: 'spin', args: { ms: 60_000 }, progress: false, liveLogs: false, m: 'AAAA' },
        { jobId: 'forged-2' },
      );
    } finally {
      await queue.close();
    }
    await until(
      async () => ((await h.stats(r)).refused ?? 0) - (before.refused ?? 0) === 2,
      30_000,
      'both forged jobs refused',
    );
    // Each forged job asked for a minute of spin: had either run, the host would be running it now.
    const after = await h.stats(r);
    expect(after).toMatchObject({ running: 0, active: 0 });
    expect(h.stderr()).toMatch(
      /refused job forged-1 \(tool "spin"\): its data does not verify against this host's cluster key/,
    );
  });

  it("a forged outcome (published, then written into the job state) is dropped: the call waits for, and gets, the host's real one", async () => {
    const f = fronts[0]!;
    const { key, jobId, front } = await runningJob(f, 'victim', { ms: 4000, stageMs: 5 });
    const forged = JSON.stringify({
      j: jobId,
      t: 'o',
      o: { kind: 'completed', result: { content: [{ type: 'text', text: 'FORGED' }] } },
      h: 'stranger',
    });
    await r.publish(`mcp:${Q}:to:${front}`, forged);
    await r.publish(
      `mcp:${Q}:to:${front}`,
      JSON.stringify({ j: jobId, t: 'p', r: { progress: 99, message: 'FORGED' } }),
    );
    await r.hset(key, 's', 'responding', 'o', forged);
    // The front end's sweep reads the forged state (once a second) and keeps waiting; the host, still running, answers over it.
    const answer = await f.next((m) => m.id === 'victim', 60_000);
    expect((answer.result as { isError?: boolean }).isError).toBeFalsy();
    expect(text(answer)).toMatch(/^spun \d+ slices/);
    expect(JSON.stringify(f.lines)).not.toMatch(/FORGED/);
    expect(responsesFor(f, 'victim')).toHaveLength(1);
  }, 90_000);

  it('a signed job re-added under its own id after it ended (a replay) is refused and counted refused, never run', async () => {
    const f = fronts[0]!;
    const h = hosts[0]!;
    const start = await settledStats(h);
    const { jobId } = await runningJob(f, 'replayed', { ms: 300, stageMs: 5 });
    // What anyone who can read Redis can copy while the job is on the queue: its name and its signed data.
    const [name, data] = await r.hmget(`bull:${Q}:${jobId}`, 'name', 'data');
    expect(text(await f.next((m) => m.id === 'replayed', 30_000))).toMatch(/^spun \d+ slices/);
    await until(async () => (await r.exists(`mcp:${Q}:job:${jobId}`)) === 0, 30_000, 'the job state retired');
    await until(async () => (await r.exists(`bull:${Q}:${jobId}`)) === 0, 30_000, 'the job removed from the queue');
    // The host writes its counters a few ms late (coalesced): wait until they count the answer before comparing.
    await until(async () => ((await h.stats(r)).answered ?? 0) > (start.answered ?? 0), 30_000, 'the answer counted');
    const before = await settledStats(h);
    const queue = new Queue(Q, { connection: { url: redis.url } });
    try {
      await queue.add(name!, JSON.parse(data!) as object, { jobId, removeOnComplete: true, removeOnFail: true });
    } finally {
      await queue.close();
    }
    await until(
      async () => ((await h.stats(r)).refused ?? 0) - (before.refused ?? 0) === 1,
      30_000,
      'the replay refused',
    );
    const after = await h.stats(r);
    expect(after.skipped ?? 0).toBe(before.skipped ?? 0);
    expect(after.answered).toBe(before.answered);
    expect(after).toMatchObject({ running: 0, active: 0 });
  }, 90_000);

  it("junk a stranger publishes on a front end's channel (null, arrays, numbers, bad JSON) is ignored; the front end keeps serving", async () => {
    const f = fronts[0]!;
    const { jobId, front } = await runningJob(f, 'beside-junk', { ms: 400, stageMs: 10 });
    const channel = `mcp:${Q}:to:${front}`;
    // 'null' once took a front end down: its listener threw inside ioredis, which re-throws.
    const junk = [
      'null',
      '[]',
      '42',
      '"text"',
      'true',
      '{',
      '',
      JSON.stringify({ j: null, t: 'o' }),
      JSON.stringify({ j: jobId, t: 'o', o: null }),
      JSON.stringify({ j: jobId, t: 'q' }),
    ];
    for (const message of junk) expect(await r.publish(channel, message)).toBe(1);
    // And on the hosts' channels: every host listens to both.
    for (const message of [...junk, `${jobId} x y z`, ' '])
      for (const ch of [`mcp:${Q}:cancel`, `mcp:${Q}:reply`]) expect(await r.publish(ch, message)).toBe(hosts.length);
    const answer = await f.next((m) => m.id === 'beside-junk', 60_000);
    expect(text(answer)).toMatch(/^spun \d+ slices/);
    call(f, 'after-junk', 'spin', { ms: 1 });
    expect(text(await f.next((m) => m.id === 'after-junk', 60_000))).toMatch(/^spun 1 slices/);
    expect(f.stderr).not.toMatch(/TypeError|Cannot read properties/);
    expect(hosts[0]!.stderr()).not.toMatch(/TypeError|Cannot read properties/);
  }, 90_000);

  it("a front end whose key differs from the hosts': its calls fail with a clear error and are not run", async () => {
    const other = new RawServer(['--redis', redis.url, '--queue', Q, '--cluster-key-file', OTHER]);
    fronts.push(other);
    await initializeRaw(other);
    const before = await hosts[0]!.stats(r);
    call(other, 'mismatch', 'spin', { ms: 1 });
    const answer = await other.next((m) => m.id === 'mismatch', 60_000);
    expect(answer.result).toMatchObject({ isError: true });
    expect(text(answer)).toMatch(/a worker host refused this call: .*same --cluster-key-file/);
    // The write that counts the refusal counts every answer before it (the host's counters are written a few ms
    // late, coalesced, so `before` may lack the last test's): from there on, nothing is answered.
    let refused: Record<string, number> = {};
    await until(
      async () => ((refused = await hosts[0]!.stats(r)).refused ?? 0) > (before.refused ?? 0),
      30_000,
      'the refusal counted',
    );
    expect((await hosts[0]!.stats(r)).answered).toBe(refused.answered);
    cancel(other, 'mismatch'); // too late: ignored
  }, 90_000);

  it('a key file that is too short, or missing, is refused at start with one line', async () => {
    const short = keyFile('short.key', 'hunter2\n');
    for (const [file, why] of [
      [short, /holds 7 bytes; a cluster key needs at least 32/],
      [join(dir, 'nope.key'), /cannot read the cluster key file .*nope\.key: ENOENT/],
    ] as const) {
      const s = new RawServer(['--redis', redis.url, '--queue', Q, '--cluster-key-file', file]);
      expect(await s.exited).toBe(1);
      expect(s.stderr.trim().split('\n')).toHaveLength(1);
      expect(s.stderr).toMatch(why);
      expect(s.stderr).not.toMatch(/hunter2/);
    }
  });
});
