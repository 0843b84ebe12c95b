/**
 * `--tool-priority idle`: tool threads in SCHED_IDLE, so the server's own
 * thread preempts a spinning tool at once. Checked from inside (a tool reads
 * its own thread's policy), from outside (/proc of the server process), after
 * a hard stop (the replacement thread too), on a worker host, and where chrt
 * is missing (nice 19 and a warning).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor, InvalidOptionError } from '../dist/src/index.js';
import { CLI, sleep, stats, stdioClient, until, type WiredClient } from './helpers.js';
import { run } from './cli-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { frontEnd, startHost, type HostProcess } from './remote-helpers.js';

const SCHED_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/sched-tools.js', import.meta.url));
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

/**
 * Policies of every thread of a process, from outside, by tid. Read from the
 * `policy` line of /proc/<pid>/task/<tid>/sched, not the stat field the code
 * under test parses, so a shared parsing mistake cannot pass.
 */
function policies(pid: number): Map<number, number> {
  return new Map(
    readdirSync(`/proc/${pid}/task`).map((tid) => {
      const line = /^policy\s*:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'));
      return [Number(tid), Number(line![1])];
    }),
  );
}
const idleThreads = (pid: number) => [...policies(pid).values()].filter((p) => p === SCHED_IDLE).length;

/** The nice value of a process's main thread (proc(5) field 19). */
function mainNice(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19 - 3]);
}

/** A directory whose only `chrt` fails the way a refused one does. */
function failingChrt(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-chrt-'));
  writeFileSync(
    join(dir, 'chrt'),
    '#!/bin/sh\necho "chrt: failed to set pid $4\'s policy: Operation not permitted" >&2\nexit 1\n',
  );
  chmodSync(join(dir, 'chrt'), 0o755);
  return dir;
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
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: 0, nice: mainNice(w.transport.pid!) });
    expect(idleThreads(w.transport.pid!)).toBe(0);
    await until(() => err().includes('worker thread'), 15_000, 'the start-up line');
    expect(err()).not.toMatch(/priority|MCP_CANCEL_POOL_TOOL_PRIORITY/);
  });

  it('--tool-priority idle puts every pool thread, and only those, in SCHED_IDLE', async () => {
    const w = await stdioClient([
      '--threads',
      '2',
      '--spare-threads',
      '1',
      '--tool-priority',
      'idle',
      '--tools',
      SCHED_TOOLS,
    ]);
    clients.push(w);
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: SCHED_IDLE });
    // Two threads plus the standby; the main thread, libuv's and V8's stay normal.
    const pid = w.transport.pid!;
    expect(idleThreads(pid)).toBe(3);
    expect(policies(pid).get(pid)).toBe(0);
    await until(() => err().includes('priority idle'), 15_000, 'the start-up line naming the priority');
    expect(err()).not.toContain('MCP_CANCEL_POOL_TOOL_PRIORITY');
  });

  it('a thread that replaces a hard-stopped one gets the same class', async () => {
    const w = await stdioClient([
      '--threads',
      '1',
      '--spare-threads',
      '0',
      '--grace-ms',
      '100',
      '--tool-priority',
      'idle',
      '--tools',
      SCHED_TOOLS,
    ]);
    clients.push(w);
    const first = await sched(w);
    const controller = new AbortController();
    // Cancel only once the spin has begun (its progress says so): an idle thread on a busy machine may take
    // seconds to pick the call up, and a cancel before that is honoured at the first checkpoint, no hard stop.
    let spinning!: () => void;
    const begun = new Promise<void>((r) => (spinning = r));
    const stuck = w.client
      .callTool({ name: 'ignore_cancel', arguments: { ms: 60_000 } }, undefined, {
        signal: controller.signal,
        onprogress: () => spinning(),
      })
      .catch((e: Error) => e);
    await begun;
    controller.abort();
    expect(await stuck).toBeInstanceOf(Error);
    // However long the starved thread takes to go, the outcome is decided: a hard stop and a replacement.
    await until(async () => (await stats(w.client)).hardKilled === 1, 50_000, 'the hard stop');
    expect(await stats(w.client)).toMatchObject({ cancelled: 1, completed: 1, hardKilled: 1 });
    const after = await sched(w);
    expect(after.threadId).not.toBe(first.threadId);
    expect(after.policy).toBe(SCHED_IDLE);
  }, 90_000);

  it('without chrt the threads fall back to nice 19 and the server says why', async () => {
    const w = await stdioClient(
      ['--threads', '1', '--tool-priority', 'idle', '--tools', SCHED_TOOLS],
      {},
      { PATH: '/nonexistent' },
    );
    clients.push(w);
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: 0, nice: 19 });
    await until(
      () => /tool threads got 'nice-19' \(chrt failed: chrt not found/.test(err()),
      15_000,
      'the fallback warning',
    );
    expect(err()).toContain('priority nice-19');
  });

  it('a chrt that refuses: nice 19, and the warning carries what chrt said', async () => {
    const w = await stdioClient(
      ['--threads', '1', '--tool-priority', 'idle', '--tools', SCHED_TOOLS],
      {},
      { PATH: `${failingChrt()}:/usr/bin:/bin` },
    );
    clients.push(w);
    const err = stderrOf(w);
    expect(await sched(w)).toMatchObject({ policy: 0, nice: 19 });
    await until(() => err().includes('MCP_CANCEL_POOL_TOOL_PRIORITY'), 15_000, 'the fallback warning');
    expect(err()).toMatch(
      /got 'nice-19' \(chrt failed: chrt: failed to set pid \d+'s policy: Operation not permitted\)/,
    );
    expect(err().match(/MCP_CANCEL_POOL_TOOL_PRIORITY/g)).toHaveLength(1);
  });

  it('serve --redis refuses --tool-priority: the front end has no pool, the hosts take the flag', async () => {
    const r = await run(process.execPath, [CLI, 'serve', '--redis', 'redis://127.0.0.1:1', '--tool-priority', 'idle']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("option '--tool-priority <class>' cannot be used with option '--redis <url>'");
    expect(r.stdout).toBe('');
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
    await expect(Executor.create({ toolPriority: 'low' as never })).rejects.toThrow(
      /toolPriority: expected 'normal' or 'idle', got "low"/,
    );
  });
});

describe('tool threads priority on a worker host', () => {
  // A liveness bound, not a speed: SCHED_IDLE threads run only on a core nothing else wants, so on a machine the
  // rest of the suite keeps busy a 1 ms slice and its checkpoint can take seconds of wall time.
  const SCHED_IDLE_LIVENESS_BOUND_MS = 45_000;
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

  it(
    'runs calls on SCHED_IDLE threads, says so at start, and a cancel still frees the slot for the next call',
    async () => {
      expect(host.stderr()).toContain('priority idle');
      expect(await sched(w)).toMatchObject({ policy: SCHED_IDLE });
      expect(idleThreads(host.child.pid!)).toBe(2); // one thread and its standby
      const r = redis.client();
      const before = await host.stats(r);
      // Operators see each host's class in its liveness key.
      expect(JSON.parse((await r.get(`mcp:${Q}:host:${host.id}`))!)).toMatchObject({ toolPriority: 'idle' });
      const controller = new AbortController();
      const a = w.client
        .callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1 } }, undefined, { signal: controller.signal })
        .catch((e: Error) => e);
      await until(
        async () => (await host.stats(r)).active === 1,
        SCHED_IDLE_LIVENESS_BOUND_MS,
        'the spin running on the host',
      );
      controller.abort();
      expect(await a).toBeInstanceOf(Error);
      const next = await w.client.callTool({ name: 'spin', arguments: { ms: 0 } });
      expect(next.isError).toBeUndefined();
      await until(
        async () => (await host.stats(r)).stopped === 1,
        SCHED_IDLE_LIVENESS_BOUND_MS,
        'the host counting the stop',
      );
      await sleep(50);
      // The cancelled call never answered; the next one did.
      expect(await host.stats(r)).toMatchObject({ stopped: 1, answered: before.answered! + 1, cancelsRelayed: 1 });
    },
    3 * SCHED_IDLE_LIVENESS_BOUND_MS,
  );
});
