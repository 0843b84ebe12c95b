/**
 * Unit tests of the front end's state machine (src/remote/front/remote-call.ts)
 * against a fake JobStates: every arrow of its diagram, and the rule that
 * once a cancel was asked only the host's outcome (Redis: responding) can be
 * answered. No Redis here; the real scripts are tested in remote-state.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CancelResult, JobOutcome, StartOptions } from '../dist/src/backend/backend.js';
import type { FrontJobStates, ProbeResult, RemoteCancelResult } from '../dist/src/remote/lua/job-states.js';
import type { FrontMessage, RemoteJobData } from '../dist/src/remote/messages.js';
import { ClusterKey } from '../dist/src/remote/config/cluster-key.js';
import { RemoteCall } from '../dist/src/remote/front/remote-call.js';
import type { Refusal, RemoteContext } from '../dist/src/remote/front/remote-context.js';
import { defineTool } from '../dist/src/stages/tool.js';

const tool = defineTool({
  name: 't',
  description: 'a test tool',
  input: z.object({ n: z.number().optional() }),
  stages: [() => ({ content: [] })],
});

/** A promise with its resolvers, for steering the fake. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

class Fake {
  readonly create = deferred<void>();
  readonly enqueue = deferred<void>();
  cancelReply = deferred<RemoteCancelResult>();
  probeReply: ProbeResult = { state: 'queued' };
  noHostWins = true;
  readonly calls: string[] = [];
  readonly counters = {
    completed: 0,
    failed: 0,
    timedOut: 0,
    cancelled: 0,
    lateCancelsIgnored: 0,
    reportsReceived: 0,
    reportsDiscarded: 0,
  };
  refusal: Refusal | undefined;
  settledWith: { jobId: string | undefined } | undefined;
  enqueued: RemoteJobData | undefined;
  readonly states: FrontJobStates = {
    create: async () => (this.calls.push('create'), this.create.promise),
    requestCancel: async () => (this.calls.push('requestCancel'), this.cancelReply.promise),
    probe: async () => (this.calls.push('probe'), this.probeReply),
    failIfLost: async () => (this.calls.push('failIfLost'), true),
    failIfNoHost: async () => (this.calls.push('failIfNoHost'), this.noHostWins),
    failIfJobless: async () => (this.calls.push('failIfJobless'), true),
    retire: async () => void this.calls.push('retire'),
    owner: async () => 'F',
    openAsks: async (_jobId, asks) => (this.calls.push('openAsks'), asks.map((a) => this.kept[a] ?? null)),
  };
  /** The asks kept in the job's hash (`q:<ask>`), by ask id. */
  readonly kept: Record<string, string> = {};
  readonly ctx: RemoteContext = {
    frontId: 'F',
    redisDisplay: 'redis://***@h:1',
    queueName: 'q',
    states: this.states,
    tools: new Map([['t', tool]]),
    counters: this.counters,
    redisTimeoutMs: 50,
    clusterKey: undefined,
    refusal: () => this.refusal,
    enqueue: async (_jobId, data) => (this.calls.push('enqueue'), (this.enqueued = data), this.enqueue.promise),
    dequeue: () => void this.calls.push('dequeue'),
    reply: (_jobId, a) => void this.calls.push(`reply ${a}`),
    released: () => void this.calls.push('released'),
    submitted: () => undefined,
    stopping: (_jobId: string, host: string | undefined) => void this.calls.push(`stopping on ${host}`),
    settled: (_call, jobId) => (this.settledWith = { jobId }),
  };
}

const tick = () => new Promise((r) => setImmediate(r));
const opts = (extra: Partial<StartOptions> = {}): StartOptions => ({ tool: 't', args: {}, ...extra });
const outcome = (call: RemoteCall) =>
  Promise.race([call.done, new Promise<'pending'>((r) => setTimeout(() => r('pending'), 200))]);

async function queued(f: Fake, extra: Partial<StartOptions> = {}): Promise<RemoteCall> {
  const call = new RemoteCall(f.ctx, 's', 1);
  void call.start(opts(extra));
  f.create.resolve();
  f.enqueue.resolve();
  await tick();
  expect(call.phase.kind).toBe('queued');
  return call;
}

describe('RemoteCall: starting', () => {
  it('reserved → submitting → queued → running (the take message); queued counts as queued, not running', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    expect(call.state).toBe('queued');
    void call.start(opts());
    expect(call.phase.kind).toBe('submitting');
    f.create.resolve();
    f.enqueue.resolve();
    await tick();
    expect(call.phase.kind).toBe('queued');
    expect(call.state).toBe('queued');
    call.receive({ j: call.jobId!, t: 'r', h: 'H' });
    expect(call.phase).toMatchObject({ kind: 'running', host: 'H' });
    expect(call.state).toBe('running');
  });

  it('an unknown tool, bad arguments or a refusal settle failed at once, without touching Redis', async () => {
    for (const [o, code] of [
      [opts({ tool: 'nope' }), 'unknown_tool'],
      [opts({ args: { n: 'x' } }), 'invalid_arguments'],
    ] as const) {
      const f = new Fake();
      const out = await new RemoteCall(f.ctx, 's', 1).start(o);
      expect(out).toMatchObject({ kind: 'failed', code });
      expect(f.calls).toEqual([]);
    }
    const f = new Fake();
    f.refusal = { code: 'queue_full', message: 'busy' };
    expect(await new RemoteCall(f.ctx, 's', 1).start(opts())).toEqual({
      kind: 'failed',
      code: 'queue_full',
      message: 'busy',
    });
    expect(f.counters.failed).toBe(1);
  });

  it('queuing that fails with no cancel asked: an error is owed (settled failed, naming Redis without secrets)', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    const done = call.start(opts());
    f.create.reject(new Error('Reached the max retries per request limit'));
    const out = await done;
    expect(out).toMatchObject({ kind: 'failed', code: 'rejected' });
    expect((out as { message: string }).message).toMatch(
      /^Redis at redis:\/\/\*\*\*@h:1 failed while queuing the call/,
    );
  });
});

describe("RemoteCall: a cancel that was asked is never followed by anything but the host's outcome", () => {
  it('reserved: cancelled at once, Redis never touched', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    expect(await call.requestCancel()).toBe('cancelled-queued');
    expect(await call.done).toEqual({ kind: 'cancelled', from: 'queued', hardKilled: false });
    expect(f.calls).toEqual([]);
  });

  it('submitting, then queuing fails: cancelled (not failed); nothing is owed', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    void call.start(opts());
    const decision = call.requestCancel();
    expect(call.state).toBe('cancelling');
    f.create.reject(new Error('Reached the max retries per request limit'));
    expect(await decision).toBe('cancelled-queued');
    expect((await call.done).kind).toBe('cancelled');
    expect(f.counters).toMatchObject({ cancelled: 1, failed: 0 });
  });

  it('submitting, and queuing never answers (a stalled Redis): cancelled after the Redis timeout', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    void call.start(opts());
    expect(await call.requestCancel()).toBe('cancelled-queued');
    expect(f.counters).toMatchObject({ cancelled: 1, failed: 0 });
    expect(f.calls).not.toContain('requestCancel');
  });

  it('submitting, then the job lands: Redis decides (queued → cancelled), and the job is taken off the queue', async () => {
    const f = new Fake();
    const call = new RemoteCall(f.ctx, 's', 1);
    void call.start(opts());
    const decision = call.requestCancel();
    f.create.resolve();
    f.enqueue.resolve();
    await tick();
    f.cancelReply.resolve({ found: 'queued' });
    expect(await decision).toBe('cancelled-queued');
    expect(f.calls).toEqual(['create', 'enqueue', 'requestCancel', 'dequeue']);
  });

  it('running: Redis says running → cancelled-running, its stop awaited; reports while cancelling are discarded', async () => {
    const f = new Fake();
    const seen: unknown[] = [];
    const call = await queued(f, { onProgress: (r) => seen.push(r) });
    call.receive({ j: call.jobId!, t: 'p', r: { progress: 1 } });
    expect(call.state).toBe('running'); // a report means a host runs it
    const decision = call.requestCancel();
    call.receive({ j: call.jobId!, t: 'p', r: { progress: 2 } });
    f.cancelReply.resolve({ found: 'running', host: 'h1' });
    expect(await decision).toBe('cancelled-running');
    expect(seen).toEqual([{ progress: 1 }]);
    expect(f.counters).toMatchObject({ reportsReceived: 2, reportsDiscarded: 1, cancelled: 1 });
    expect(f.calls).toContain('stopping on h1'); // its stop is awaited while that host lives
  });

  it("completion won in Redis, its outcome read before the cancel's reply: the outcome is answered, one late cancel", async () => {
    const f = new Fake();
    const call = await queued(f);
    const decision = call.requestCancel();
    const result: JobOutcome = { kind: 'completed', result: { content: [{ type: 'text', text: 'r' }] } };
    call.receive({ j: call.jobId!, t: 'o', o: result, h: 'H' });
    f.cancelReply.resolve({
      found: 'responding',
      message: JSON.stringify({ j: call.jobId!, t: 'o', o: result, h: 'H' } satisfies FrontMessage),
    });
    expect(await decision).toBe('too-late');
    expect(await call.done).toEqual(result);
    expect(f.counters).toMatchObject({ completed: 1, cancelled: 0, lateCancelsIgnored: 1 });
  });

  it("completion won in Redis, its message lost: the cancel's reply carries the outcome, which is answered", async () => {
    const f = new Fake();
    const call = await queued(f);
    const decision = call.requestCancel();
    const result: JobOutcome = { kind: 'timedOut', timeoutMs: 5, hardKilled: false };
    f.cancelReply.resolve({
      found: 'responding',
      message: JSON.stringify({ j: call.jobId, t: 'o', o: result, h: 'H' }),
    });
    expect(await decision).toBe('too-late');
    expect(await call.done).toEqual(result);
    expect(f.counters.lateCancelsIgnored).toBe(1);
  });

  it("the cancel's Redis call fails, or Redis lost the job: cancelled (nothing sent), whatever the failure", async () => {
    for (const reply of [
      () => Promise.reject(new Error('Connection is closed.')),
      () => Promise.resolve({ found: 'unknown' as const }),
      () => new Promise<never>(() => undefined),
    ]) {
      const f = new Fake();
      const call = await queued(f);
      f.cancelReply = { ...deferred<RemoteCancelResult>(), promise: reply() };
      f.cancelReply.promise.catch(() => undefined);
      const d: CancelResult = await call.requestCancel();
      expect(d).toBe('cancelled-queued');
      expect((await call.done).kind).toBe('cancelled');
      expect(f.counters.failed).toBe(0);
    }
  });

  it("a second cancel gets the first one's decision; a cancel after settling is too late, counted once", async () => {
    const f = new Fake();
    const call = await queued(f);
    const first = call.requestCancel();
    const second = call.requestCancel();
    f.cancelReply.resolve({ found: 'queued' });
    expect(await first).toBe('cancelled-queued');
    expect(await second).toBe('cancelled-queued');
    expect(await call.requestCancel()).toBe('too-late');
    expect(f.counters).toMatchObject({ cancelled: 1, lateCancelsIgnored: 1 });
  });
});

describe('RemoteCall: the sweep', () => {
  it('a state Redis lost, or one the hosts cancelled: settled failed with a true message', async () => {
    for (const [probe, text] of [
      [{ state: 'gone' }, /state in Redis is gone/],
      [{ state: 'cancelled' }, /liveness key in Redis expired/],
    ] as const) {
      const f = new Fake();
      const call = await queued(f);
      f.probeReply = probe;
      await call.check(1000);
      const out = await call.done;
      expect(out.kind).toBe('failed');
      expect((out as { message: string }).message).toMatch(text);
    }
  });

  it('an outcome whose message was lost is delivered from the probe', async () => {
    const f = new Fake();
    const call = await queued(f);
    const result: JobOutcome = { kind: 'completed', result: { content: [] } };
    f.probeReply = {
      state: 'responding',
      message: JSON.stringify({ j: call.jobId!, t: 'o', o: result, h: 'H' }),
      host: 'H',
      hostAlive: true,
    };
    await call.check(1000);
    expect(await call.done).toEqual(result);
  });

  it('an ask whose message was missed is taken from the probe once; one answered or withdrawn here is never asked again', async () => {
    const f = new Fake();
    const asked: string[] = [];
    let answer!: (r: Record<string, unknown>) => void;
    const call = await queued(f, {
      onClientRequest: (_method, params) => (asked.push(String(params.n)), new Promise((r) => (answer = r))),
    });
    const j = call.jobId!;
    const q = (a: string, n: string) =>
      JSON.stringify({ j, t: 'q', a, q: { method: 'elicitation/create', params: { n } } });
    Object.assign(f.kept, {
      a1: q('a1', 'one'),
      a2: q('a2', 'two'),
      a3: JSON.stringify({ j: 'other', t: 'q', a: 'a3', q: { method: 'roots/list', params: { n: 'x' } } }),
    });
    f.probeReply = { state: 'running', host: 'H' };
    await call.check(1000);
    expect(f.calls).not.toContain('openAsks'); // no open ask listed: no extra round trip
    call.receive({ j, t: 'x', a: 'a2' }); // withdrawn before its ask was read: never asked
    f.probeReply = { state: 'running', host: 'H', asks: ['a1', 'a2', 'a3', 'gone'] };
    await call.check(1000);
    await call.check(1000);
    expect(asked).toEqual(['one']); // a3 names another job: not taken
    answer({ action: 'accept' });
    await tick();
    expect(f.calls).toContain('reply a1');
    await call.check(1000); // the reply not yet in Redis: the probe still lists a1
    call.receive(JSON.parse(q('a1', 'one')) as Parameters<RemoteCall['receive']>[0]);
    expect(asked).toEqual(['one']);
    expect(call.phase.kind).toBe('running');
  });

  it('no host alive: a queued call fails with the message given, once the CAS in Redis won; a running one is left alone', async () => {
    const f = new Fake();
    const call = await queued(f);
    await call.noHost('no worker host is serving queue q');
    expect(await call.done).toMatchObject({
      kind: 'failed',
      code: 'rejected',
      message: 'no worker host is serving queue q',
    });
    const g = new Fake();
    const running = await queued(g);
    running.receive({ j: running.jobId!, t: 'r', h: 'H' });
    await running.noHost('x');
    expect(await outcome(running)).toBe('pending');
    expect(g.calls).not.toContain('failIfNoHost');
  });
});

describe('RemoteCall with a cluster key', () => {
  const key = ClusterKey.from('k'.repeat(32));
  const keyed = () => {
    const f = new Fake();
    Object.assign(f.ctx, { clusterKey: key });
    return f;
  };
  const result: JobOutcome = { kind: 'completed', result: { content: [{ type: 'text', text: 'forged?' }] } };

  it('signs the job it queues: its data and id verify, and a changed argument does not', async () => {
    const f = keyed();
    const call = await queued(f, { args: { n: 7 } });
    const { m, ...rest } = f.enqueued!;
    expect(key.verify('job', call.jobId!, rest, m)).toBe(true);
    expect(key.verify('job', call.jobId!, { ...rest, args: { n: 8 } }, m)).toBe(false);
    expect(key.verify('job', 'another-job', rest, m)).toBe(false);
    expect(ClusterKey.from('x'.repeat(32)).verify('job', call.jobId!, rest, m)).toBe(false);
  });

  it("an outcome in Redis that does not verify is dropped: the call waits for the host's own, which is delivered", async () => {
    const f = keyed();
    const call = await queued(f);
    f.probeReply = {
      state: 'responding',
      message: JSON.stringify({ j: call.jobId!, t: 'o', o: result, h: 'H' }),
      host: 'H',
      hostAlive: true,
    };
    await call.check(1000);
    await call.check(1000);
    expect(await outcome(call)).toBe('pending');
    expect(call.phase).toMatchObject({ kind: 'running', host: 'H' });
    const real: JobOutcome = { kind: 'completed', result: { content: [{ type: 'text', text: 'real' }] } };
    const message = { j: call.jobId!, t: 'o', o: real, h: 'H' } as const;
    f.probeReply = {
      state: 'responding',
      message: JSON.stringify({ ...message, m: key.sign('message', call.jobId!, message) }),
      host: 'H',
      hostAlive: true,
    };
    await call.check(1000);
    expect(await call.done).toEqual(real);
  });

  it('an outcome that does not verify, and its host gone past the lost-host bound: the call fails saying both', async () => {
    const f = keyed();
    const call = await queued(f);
    f.probeReply = {
      state: 'responding',
      message: JSON.stringify({ j: call.jobId!, t: 'o', o: result, h: 'H' }),
      host: 'H',
      hostAlive: false,
    };
    await call.check(30);
    expect(await outcome(call)).toBe('pending'); // the host may be slow to refresh its key: one look is not enough
    await new Promise((r) => setTimeout(r, 40));
    await call.check(30);
    expect(await call.done).toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/worker host H is gone and the only outcome in Redis does not verify/),
    });
  });

  it('a signed outcome is delivered', async () => {
    const f = keyed();
    const call = await queued(f);
    const message = { j: call.jobId!, t: 'o', o: result, h: 'H' } as const;
    f.probeReply = {
      state: 'responding',
      message: JSON.stringify({ ...message, m: key.sign('message', call.jobId!, message) }),
      host: 'H',
      hostAlive: true,
    };
    await call.check(1000);
    expect(await call.done).toEqual(result);
  });

  it('refused by a host (its key differs): the call fails saying so', async () => {
    const f = keyed();
    const call = await queued(f);
    f.probeReply = { state: 'refused' };
    await call.check(1000);
    expect(await call.done).toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/refused this call.*same --cluster-key-file/),
    });
  });

  it('refuses a key shorter than 32 bytes, naming where it came from and not its value', () => {
    expect(() => ClusterKey.from('short-secret', '/etc/mcp/cluster.key')).toThrow(
      /^\/etc\/mcp\/cluster\.key holds 12 bytes; a cluster key needs at least 32/,
    );
    expect(() => ClusterKey.from('short-secret')).not.toThrow(/short-secret/);
  });
});
