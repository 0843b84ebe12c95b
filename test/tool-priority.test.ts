/**
 * `--tool-priority idle`: tool threads in SCHED_IDLE, so the server's own
 * thread preempts a spinning tool at once. Checked from inside (a tool reads
 * its own thread's policy), from outside (/proc of the server process), after
 * a hard stop (the replacement thread too), on a worker host, and where chrt
 * is missing (nice 19 and a warning).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor, InvalidOptionError } from '../dist/src/index.js';
import { sleep, stats, stdioClient, until, type WiredClient } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { frontEnd, startHost, type HostProcess } from './remote-helpers.js';

const SCHED_TOOLS = fileURLToPath(new URL('../dist/test/fixtures/sched-tools.js', import.meta.url));
const SCHED_IDLE = 5;

interface Sched {
  policy: number;
  nice: number;
  threadId: number;
}

async function sched(w: WiredClient): Promise<Sched> {
  const r = await w.client.callTool({ name: 'thread_sched', arguments: {} });
  expect(r.isError).toBeUndefined();
  return JSON.parse((r.content as { text: string }[])[0]!.text) as Sched;
}

/** Policies of every thread of a process, from outside (proc(5) field 41). */
function policies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[41 - 3]);
  });
}

function stderrOf(w: WiredClient): () => string {
  let text = '';
  w.transport.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

const clients: WiredClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe('tool threads priority, local pool over stdio', () => {
  it('by default tool threads are scheduled like the rest of the process', async () => {
    const w = await stdioClient(['--threads', '1', '--tools', SCHED_TOOLS]);
    clients.push(w);
    expect(await sched(w)).toMatchObject({ policy: 0, nice: 0 });
    expect(policies(w.transport.pid!).filter((p) => p === SCHED_IDLE)).toHaveLength(0);
  });

  it('--tool-priority idle puts every pool thread, and only those, in SCHED_IDLE', async () => {
    const w = await stdioClient(['--threads', '2', '--spare-threads', '1', '--tool-priority', 'idle', '--tools', SCHED_TOOLS]);
    clients.push(w);
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: SCHED_IDLE });
    // Two threads plus the standby; the main thread, libuv's and V8's stay normal.
    const all = policies(w.transport.pid!);
    expect(all.filter((p) => p === SCHED_IDLE)).toHaveLength(3);
    expect(all.length).toBeGreaterThan(3);
    await until(() => err().includes('priority idle'), 5000, 'the start-up line naming the priority');
  });

  it('a thread that replaces a hard-stopped one gets the same class', async () => {
    const w = await stdioClient(['--threads', '1', '--spare-threads', '0', '--grace-ms', '100', '--tool-priority', 'idle', '--tools', SCHED_TOOLS]);
    clients.push(w);
    const first = await sched(w);
    const controller = new AbortController();
    const stuck = w.client.callTool({ name: 'ignore_cancel', arguments: { ms: 20_000 } }, undefined, { signal: controller.signal }).catch((e: Error) => e);
    await until(async () => (await stats(w.client)).running === 1, 5000, 'the stuck call running');
    controller.abort();
    expect(await stuck).toBeInstanceOf(Error);
    await until(async () => (await stats(w.client)).hardKilled === 1, 10_000, 'the hard stop');
    const after = await sched(w);
    expect(after.threadId).not.toBe(first.threadId);
    expect(after.policy).toBe(SCHED_IDLE);
  });

  it('without chrt the threads fall back to nice 19 and the server says why', async () => {
    const w = await stdioClient(['--threads', '1', '--tool-priority', 'idle', '--tools', SCHED_TOOLS], {}, { PATH: '/nonexistent' });
    clients.push(w);
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: 0, nice: 19 });
    await until(() => /tool threads got 'nice-19' \(chrt failed/.test(err()), 5000, 'the fallback warning');
    expect(err()).toContain('priority nice-19');
  });
});

describe('tool threads priority, Executor API', () => {
  it('reports what the threads got, and refuses an unknown class by name', async () => {
    const ex = await Executor.create({ threads: 1, spareThreads: 0, toolPriority: 'idle' });
    try {
      expect(ex.toolPriority).toEqual({ priority: 'idle' });
    } finally {
      await ex.close();
    }
    await expect(Executor.create({ toolPriority: 'low' as never })).rejects.toThrow(InvalidOptionError);
    await expect(Executor.create({ toolPriority: 'low' as never })).rejects.toThrow(/toolPriority: expected 'normal' or 'idle', got "low"/);
  });
});

describe('tool threads priority on a worker host', () => {
  const Q = 'priority';
  let redis: RedisProcess;
  let host: HostProcess;
  let w: WiredClient;
  beforeAll(async () => {
    redis = await startRedis();
    host = await startHost(redis.url, Q, ['--threads', '1', '--tool-priority', 'idle', '--tools', SCHED_TOOLS]);
    w = await frontEnd(redis.url, Q, ['--tools', SCHED_TOOLS]);
  }, 60_000);
  afterAll(async () => {
    await w?.close();
    await host?.stop();
    await redis?.stop();
  });

  it('runs calls on SCHED_IDLE threads, says so at start, and a cancel still frees the slot for the next call', async () => {
    expect(host.stderr()).toContain('priority idle');
    expect(await sched(w)).toMatchObject({ policy: SCHED_IDLE });
    expect(policies(host.child.pid!).filter((p) => p === SCHED_IDLE)).toHaveLength(2); // one thread and its standby
    const r = redis.client();
    const before = await host.stats(r);
    const controller = new AbortController();
    const a = w.client.callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1 } }, undefined, { signal: controller.signal }).catch((e: Error) => e);
    await until(async () => (await host.stats(r)).active === 1, 10_000, 'the spin running on the host');
    controller.abort();
    expect(await a).toBeInstanceOf(Error);
    const next = await w.client.callTool({ name: 'spin', arguments: { ms: 0 } });
    expect(next.isError).toBeUndefined();
    await until(async () => (await host.stats(r)).stopped === 1, 10_000, 'the host counting the stop');
    await sleep(50);
    // The cancelled call never answered; the next one did.
    expect(await host.stats(r)).toMatchObject({ stopped: 1, answered: before.answered! + 1, cancelsRelayed: 1 });
  });
});
