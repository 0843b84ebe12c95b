/**
 * No process a tool started outlives its call (issue 61, part 1). The tools start a busy shell (with a busy
 * grandchild in its group) through plain `node:child_process` in every form, and ignore the call's signal; the
 * test counts the processes by a marker in their command line (/proc). After a cancel, a hard stop, and the
 * server's own exit (SIGTERM, stdin closed), over stdio and HTTP, in both eras, and on a worker host, every one of
 * them is gone within the grace plus one second, and no zombie is left. Real server subprocesses, real SDK clients.
 */
import { fileURLToPath } from 'node:url';
import { isBuiltin } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, startHttpServer, stats, stdioClient, until, type HttpServerProcess } from './helpers.js';
import { httpClient } from './http-helpers.js';
import { modernHttp, modernStats, modernStdio } from './modern-helpers.js';
import { call, cancel, initializeRaw, rawFrontEnd, responsesFor, startHost } from './remote-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { killMarked, marked, newMarker, zombiesOf } from './child-procs.js';
import { busyScript } from './fixtures/child-tools.js';

const TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/child-tools.js', import.meta.url));
const GRACE_MS = 300;
/** Whether the server can reap a terminated worker's children: `node:ffi` (Node 26.1 and later) gives it waitpid. */
const REAPS = isBuiltin('node:ffi');
/**
 * A liveness bound: a stopped call's children are gone within the grace plus a second on an idle machine (the
 * kills are sent at the grace's end), but on a busy one the shell's death and the server's exit can take seconds
 * more; a child left running is still never gone.
 */
const GONE_WITHIN_MS = GRACE_MS + 20_000;
/** A bound on a hang: a busy machine may take this long to start a server, a call, or a shell. */
const STARTED_WITHIN_MS = 60_000;
const SERVE = ['--threads', '1', '--spare-threads', '0', '--grace-ms', String(GRACE_MS), '--tools', TOOLS];

const markers: string[] = [];
const ends: (() => unknown)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0)) await end();
  for (const m of markers.splice(0)) killMarked(m);
});

/** A marker for one busy child; the test ends whatever carries it, whatever happens. */
function marker(what: string): string {
  const m = newMarker(what);
  markers.push(m);
  return m;
}

/** The shell and its grandchild (or the forked Node) are running. */
async function started(m: string, via = 'spawn'): Promise<void> {
  await until(() => marked(m).length >= (via === 'fork' ? 1 : 2), STARTED_WITHIN_MS, `the child of ${m} started`);
}

async function gone(m: string): Promise<void> {
  await until(() => marked(m).length === 0, GONE_WITHIN_MS, `every process of ${m} gone`);
}

describe('stdio, 2025-11-25 (SDK client)', () => {
  it.each(['spawn', 'exec', 'execFile', 'promisified', 'fork'] as const)(
    'a cancel ends a busy child started with %s, its grandchild too; nothing is answered',
    async (via) => {
      const w = await stdioClient(SERVE);
      ends.push(() => w.close());
      // spawn: the shell ignores SIGTERM, so only the SIGKILL after the grace ends it.
      const m = marker(via);
      const controller = new AbortController();
      const pending = w.client
        .callTool({ name: 'busy_child', arguments: { marker: m, via, trapTerm: via === 'spawn' } }, undefined, {
          signal: controller.signal,
        })
        .then(
          () => 'answered',
          () => 'rejected',
        );
      await started(m, via);
      controller.abort('test');
      await gone(m);
      expect(await pending).toBe('rejected');
      // spawn's shell outlives the grace, so its worker may be hard-stopped before it reaps the shell: the shell is
      // then this process's zombie, reaped by waitpid where node:ffi exists, else counted until the server exits.
      const settled = (s: Awaited<ReturnType<typeof stats>>) =>
        s.childrenAlive === 0 &&
        s.childrenZombies === zombiesOf(w.transport.pid!).length &&
        (REAPS ? s.childrenZombies === 0 : s.childrenZombies <= s.hardKilled);
      await until(async () => settled(await stats(w.client)), GONE_WITHIN_MS, 'the children gone, each zombie counted');
      const s = await stats(w.client);
      expect(s).toMatchObject({ cancelled: 1, completed: 0, childrenAlive: 0 });
      if (REAPS) expect(s.childrenZombies).toBe(0);
      else expect(s.childrenZombies).toBeLessThanOrEqual(s.hardKilled);
      expect(s.childrenStarted).toBeGreaterThanOrEqual(1);
      expect(s.childrenKilled).toBeGreaterThanOrEqual(1);
      if (REAPS) await until(() => zombiesOf(w.transport.pid!).length === 0, GONE_WITHIN_MS, 'no zombie');
    },
    90_000,
  );

  it('a hard stop (the stage spins without a checkpoint) ends the child, and it is reaped', async () => {
    const w = await stdioClient(SERVE);
    ends.push(() => w.close());
    const m = marker('hard');
    const controller = new AbortController();
    const pending = w.client
      .callTool(
        { name: 'busy_child', arguments: { marker: m, via: 'exec', then: 'spin', trapTerm: true } },
        undefined,
        {
          signal: controller.signal,
        },
      )
      .catch(() => 'rejected');
    await started(m);
    controller.abort('test');
    await gone(m);
    expect(await pending).toBe('rejected');
    await until(async () => (await stats(w.client)).hardKilled === 1, STARTED_WITHIN_MS, 'the hard stop');
    if (REAPS) {
      await until(() => zombiesOf(w.transport.pid!).length === 0, GONE_WITHIN_MS, 'no zombie');
      expect(await stats(w.client)).toMatchObject({ childrenAlive: 0, childrenZombies: 0 });
    } else {
      // No waitpid without node:ffi (Node 22, 24): the dead child stays a zombie until the server exits, counted.
      await until(
        async () => (await stats(w.client)).childrenZombies === zombiesOf(w.transport.pid!).length,
        GONE_WITHIN_MS,
        'the zombie counted',
      );
      expect(await stats(w.client)).toMatchObject({ childrenAlive: 0, childrenZombies: 1 });
    }
  }, 90_000);
});

describe("the server's own end", () => {
  it.each([
    ['SIGTERM', (s: RawServer) => s.child.kill('SIGTERM')],
    ['SIGINT', (s: RawServer) => s.child.kill('SIGINT')],
    ['stdin closed', (s: RawServer) => s.child.stdin.end()],
  ] as const)(
    'the server exits on %s: the children of its running calls are gone',
    async (_how, end) => {
      const raw = new RawServer(SERVE);
      ends.push(() => raw.kill());
      await initializeRaw(raw);
      const m = marker('exit');
      // Ignores SIGTERM: the exit's SIGKILL is what ends it.
      call(raw, 1, 'busy_child', { marker: m, trapTerm: true });
      await started(m);
      end(raw);
      await raw.exited;
      await gone(m);
      expect(responsesFor(raw, 1)).toEqual([]);
    },
    90_000,
  );
});

describe("the server's death by SIGKILL (no code of its own runs)", () => {
  it('the reaper process ends the groups it was told of when its pipe closes', async () => {
    const raw = new RawServer(SERVE);
    ends.push(() => raw.kill());
    await initializeRaw(raw);
    const m = marker('sigkill');
    call(raw, 1, 'busy_child', { marker: m, trapTerm: true });
    await started(m);
    // A stats read tells the reaper of every group in the rows (it learns of each one as the worker counts it anyway).
    await until(async () => (await raw.stats()).childrenAlive === 1, STARTED_WITHIN_MS, 'the child counted');
    raw.kill();
    await raw.exited;
    await gone(m);
  }, 90_000);
});

describe('HTTP', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpServer(SERVE);
  }, STARTED_WITHIN_MS);
  afterAll(() => server?.stop());

  it('2025-11-25 (SDK client): a cancel ends the child', async () => {
    const { client } = await httpClient(new URL('/mcp', server.url));
    ends.push(() => client.close());
    const m = marker('http25');
    const controller = new AbortController();
    const pending = client
      .callTool({ name: 'busy_child', arguments: { marker: m, via: 'execFile' } }, undefined, {
        signal: controller.signal,
      })
      .catch(() => 'rejected');
    await started(m);
    controller.abort('test');
    await gone(m);
    expect(await pending).toBe('rejected');
    // The same counts on /metrics: one child started and ended, none alive.
    const metric = (text: string, name: string) =>
      Number(new RegExp(`^mcp_cancel_pool_${name}\\{[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1]);
    await until(
      async () => {
        const text = await (await fetch(new URL('/metrics', server.url))).text();
        return (
          metric(text, 'children_started_total') >= 1 &&
          metric(text, 'children_killed_total') >= 1 &&
          metric(text, 'children_alive') === 0
        );
      },
      GONE_WITHIN_MS,
      'the children metrics',
    );
  }, 90_000);

  it('2026-07-28 (SDK client): aborting the call ends the child', async () => {
    const { client, close } = await modernHttp(new URL('/mcp', server.url));
    ends.push(close);
    const m = marker('http26');
    const controller = new AbortController();
    const pending = client
      .callTool({ name: 'busy_child', arguments: { marker: m, via: 'promisified' } }, { signal: controller.signal })
      .catch(() => 'rejected');
    await started(m);
    controller.abort('test');
    await gone(m);
    expect(await pending).toBe('rejected');
    await until(async () => (await modernStats(client)).childrenAlive === 0, GONE_WITHIN_MS, 'childrenAlive 0');
  }, 90_000);
});

describe('stdio, 2026-07-28 (SDK client)', () => {
  it('aborting the call ends the child', async () => {
    const { client, transport, close } = await modernStdio(SERVE);
    ends.push(close);
    const m = marker('stdio26');
    const controller = new AbortController();
    const pending = client
      .callTool({ name: 'busy_child', arguments: { marker: m, via: 'spawn' } }, { signal: controller.signal })
      .catch(() => 'rejected');
    await started(m);
    controller.abort('test');
    await gone(m);
    expect(await pending).toBe('rejected');
    await until(() => zombiesOf(transport.pid!).length === 0, GONE_WITHIN_MS, 'no zombie');
  }, 90_000);
});

describe('on a worker host (mcp-cancel-pool worker)', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  }, STARTED_WITHIN_MS);
  afterAll(() => redis?.stop());

  it("a cancel through a front end ends the host's child; the host's exit on SIGTERM ends another's", async () => {
    const q = `children-${process.pid}`;
    const host = await startHost(redis.url, q, [...SERVE, '--drain-timeout-ms', '0']);
    ends.push(() => host.kill());
    const front = await rawFrontEnd(redis.url, q, ['--tools', TOOLS]);
    ends.push(() => front.kill());
    const m = marker('host');
    call(front, 'c1', 'busy_child', { marker: m, trapTerm: true });
    await started(m);
    cancel(front, 'c1');
    await gone(m);
    const m2 = marker('hostexit');
    call(front, 'c2', 'busy_child', { marker: m2, trapTerm: true });
    await started(m2);
    await host.stop();
    await gone(m2);
    expect(responsesFor(front, 'c1')).toEqual([]);
  }, 120_000);
});

describe('ctx.spawn', () => {
  let raw: RawServer;
  let next = 0;
  beforeAll(async () => {
    raw = new RawServer(SERVE);
    await initializeRaw(raw);
  }, STARTED_WITHIN_MS);
  afterAll(() => raw?.kill());

  /** Runs `run_program` and parses what it answered. */
  async function run(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = `run-${++next}`;
    call(raw, id, 'run_program', args);
    const m = (await raw.next((x) => x.id === id)) as { result: { content: { text: string }[]; isError?: boolean } };
    const text = m.result.content[0]!.text;
    return m.result.isError ? { toolError: text } : (JSON.parse(text) as Record<string, unknown>);
  }

  it('answers code, signal, stdout and stderr; lines as they come; input on stdin; bytes with encoding buffer', async () => {
    expect(await run({ command: 'sh', args: ['-c', 'echo one; echo two >&2; printf "a\\rb"'], lines: true })).toEqual({
      code: 0,
      signal: null,
      stdout: 'one\na\rb',
      stderr: 'two\n',
      lines: expect.arrayContaining(['out:one', 'err:two', 'out:a', 'out:b']) as unknown,
    });
    expect(await run({ command: 'cat', input: 'fed on stdin' })).toMatchObject({ stdout: 'fed on stdin' });
    expect(await run({ command: 'printf', args: ['\\001\\377'], buffer: true })).toMatchObject({
      stdout: [1, 255],
      bytes: true,
    });
  });

  it('the child gets only the env given, plus PATH, unless inheritEnv', async () => {
    const env = await run({ command: 'sh', args: ['-c', 'env'], env: { GIVEN: 'yes' } });
    const names = (env.stdout as string)
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=')[0]);
    // sh itself sets PWD (and SHLVL, _); nothing of the server's environment (HOME, USER, ...) reaches the child.
    expect(names).toEqual(expect.arrayContaining(['GIVEN', 'PATH']));
    expect(names).not.toContain('HOME');
    const all = await run({ command: 'sh', args: ['-c', 'echo "$HOME"'], inheritEnv: true });
    expect((all.stdout as string).trim()).not.toBe('');
  });

  it('cwd resolves under settings.root and is refused outside it', async () => {
    expect(await run({ command: 'pwd', cwd: 'test' })).toMatchObject({ stdout: `${process.cwd()}/test\n` });
    expect(await run({ command: 'pwd', cwd: '..' })).toEqual({
      toolError: expect.stringContaining("path '..' is outside the allowed root") as unknown,
    });
  });

  it('a non-zero exit, a signal, a program that cannot start, timeoutMs and maxOutputBytes are SpawnErrors', async () => {
    expect(await run({ command: 'sh', args: ['-c', 'echo why >&2; exit 3'] })).toMatchObject({
      error: 'SpawnError',
      code: 'ERR_SPAWN',
      reason: 'exit',
      exitCode: 3,
      signal: null,
      stderrTail: 'why\n',
    });
    expect(await run({ command: 'sh', args: ['-c', 'kill -USR1 $$'] })).toMatchObject({
      reason: 'signal',
      signal: 'SIGUSR1',
    });
    expect(await run({ command: 'no-such-program-here' })).toMatchObject({ reason: 'start' });
    expect(await run({ command: 'sleep', args: ['30'], timeoutMs: 100 })).toMatchObject({
      reason: 'timeout',
      message: "'sleep' ran past its timeoutMs (100 ms)",
    });
    expect(await run({ command: 'yes', maxOutputBytes: 65536 })).toMatchObject({
      reason: 'output',
      message: "'yes' wrote more than maxOutputBytes (65536 bytes) on stdout",
    });
    await until(async () => (await raw.stats()).childrenAlive === 0, GONE_WITHIN_MS, 'no child left');
  });

  it('a cancel ends the program (SIGKILL after killGraceMs when it ignores SIGTERM), and nothing is answered', async () => {
    const m = marker('ctxspawn');
    call(raw, 'spawned', 'run_program', { command: 'sh', args: ['-c', busyScript(m, true)], killGraceMs: 100 });
    await started(m);
    cancel(raw, 'spawned');
    await gone(m);
    // A call after it is answered: the cancelled one never is.
    expect(await run({ command: 'true' })).toMatchObject({ code: 0 });
    expect(responsesFor(raw, 'spawned')).toEqual([]);
  });
});
