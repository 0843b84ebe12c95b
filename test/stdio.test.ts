/**
 * Seed section 6 over the real wire: an SDK Client against the server
 * spawned as a subprocess over stdio.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { sleep, stats, stdioClient, until, type WiredClient } from './helpers.js';

type Msg = JSONRPCMessage & {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
};

const responsesFor = (w: WiredClient, id: unknown) =>
  (w.received as Msg[]).filter((m) => m.id === id && m.method === undefined);
const toolCallId = (w: WiredClient, pick: (args: Record<string, unknown>) => boolean) =>
  (w.sent as Msg[]).find(
    (m) => m.method === 'tools/call' && pick((m.params?.arguments ?? {}) as Record<string, unknown>),
  )?.id;

let open: WiredClient[] = [];
afterEach(async () => {
  await Promise.all(open.map((w) => w.close()));
  open = [];
});
async function connect(args: string[]): Promise<WiredClient> {
  const w = await stdioClient(args);
  open.push(w);
  return w;
}

describe('over stdio with the SDK client', () => {
  it('lists the tools with input schemas', async () => {
    const w = await connect(['--threads', '1']);
    const { tools } = await w.client.listTools();
    const spin = tools.find((t) => t.name === 'spin');
    expect(spin?.inputSchema.properties).toHaveProperty('ms');
    expect((spin?.inputSchema.properties?.ms as { description?: string }).description).toMatch(/milliseconds/);
  });

  it('cancel while running: work stops, the slot is reused, nothing is sent for the request', async () => {
    const w = await connect(['--threads', '1', '--grace-ms', '10000']);
    const controller = new AbortController();
    let progress = 0;
    const call = w.client.callTool({ name: 'spin', arguments: { ms: 20_000, stageMs: 1 } }, undefined, {
      signal: controller.signal,
      onprogress: () => progress++,
    });
    await until(() => progress > 0, 10_000, 'first progress');
    controller.abort('user stopped the operation');
    await expect(call).rejects.toThrow();
    const id = toolCallId(w, (a) => a.ms === 20_000);
    const cancel = (w.sent as Msg[]).find((m) => m.method === 'notifications/cancelled');
    expect(cancel?.params?.requestId).toBe(id);
    expect(cancel).not.toHaveProperty('id');

    // One thread: a follow-up call can only run once the cancelled job gave its worker back.
    const started = performance.now();
    const next = await w.client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(next.isError).toBeFalsy();
    expect(performance.now() - started).toBeLessThan(5_000); // the cancelled job had 20 s left

    const s = await stats(w.client);
    expect(s).toMatchObject({ cancelled: 1, completed: 1, hardKilled: 0, running: 0, inFlight: 0 });
    const progressSoFar = (w.received as Msg[]).filter((m) => m.method === 'notifications/progress').length;
    await sleep(200);
    expect(responsesFor(w, id)).toHaveLength(0);
    expect((w.received as Msg[]).filter((m) => m.method === 'notifications/progress').length).toBe(progressSoFar);
  });

  const standbyCases = [
    {
      flags: ['--spare-threads', '1', '--cores', '2'],
      standby: true,
      delayMs: 0,
      does: 'starts at once on the standby thread (a core is free)',
    },
    {
      flags: ['--spare-threads', '1', '--cores', '1', '--handoff-delay-ms', '300'],
      standby: true,
      delayMs: 300,
      does: 'starts on the standby thread after --handoff-delay-ms (every core busy)',
    },
    { flags: ['--spare-threads', '0'], standby: false, delayMs: 0, does: 'waits for the hard stop' },
  ];
  for (const { flags, standby, delayMs, does } of standbyCases) {
    it(`${flags.join(' ')}: the call behind a cancelled stage that ignores checkpoints ${does}`, async () => {
      const w = await connect(['--threads', '1', ...flags, '--grace-ms', '1500']);
      expect((await stats(w.client)).threads).toBe(standby ? 2 : 1);
      const controller = new AbortController();
      // cooperative: false never checks, so only the hard stop after --grace-ms ends it.
      // Its one progress report says it is past the last checkpoint: a cancel before that would stop it cooperatively.
      let begun!: () => void;
      const spinning = new Promise<void>((r) => (begun = r));
      const stuck = w.client.callTool({ name: 'spin', arguments: { ms: 30_000, cooperative: false } }, undefined, {
        signal: controller.signal,
        onprogress: () => begun(),
      });
      stuck.catch(() => undefined);
      await spinning;
      const next = w.client.callTool({ name: 'spin', arguments: { ms: 1 } });
      await sleep(50);
      const cancelledAt = performance.now();
      controller.abort('user gave up');
      expect((await next).isError).toBeFalsy();
      // A lower bound only: the hand-off cannot happen before its delay.
      expect(performance.now() - cancelledAt).toBeGreaterThanOrEqual(delayMs);
      // Order, not timing: with a standby the next call is answered before the grace period ends in a hard stop.
      const atAnswer = await stats(w.client);
      expect(atAnswer.hardKilled).toBe(standby ? 0 : 1);
      await until(async () => (await stats(w.client)).hardKilled === 1, 10_000, 'the hard stop');
      expect(await stats(w.client)).toMatchObject({ cancelled: 1, completed: 1, running: 0, inFlight: 0 });
      expect(
        responsesFor(
          w,
          toolCallId(w, (a) => a.ms === 30_000),
        ),
      ).toHaveLength(0);
    }, 90_000); // a bound on a hang, not a speed target: three server start-ups on a loaded machine
  }

  it('completion before the cancel: the response stands and the late cancel changes nothing', async () => {
    const w = await connect(['--threads', '1']);
    const result = await w.client.callTool({ name: 'spin', arguments: { ms: 2 } });
    expect(result.isError).toBeFalsy();
    const id = toolCallId(w, (a) => a.ms === 2);
    const before = w.received.length;
    await w.client.notification({ method: 'notifications/cancelled', params: { requestId: id!, reason: 'too late' } });
    await sleep(150);
    expect(w.received.length).toBe(before); // no acknowledgement, no error
    const s = await stats(w.client);
    expect(s).toMatchObject({ completed: 1, cancelled: 0 });
    expect(s.unknownCancelsIgnored + s.lateCancelsIgnored).toBe(1);
  });

  it('a response that arrives after the cancel is not used, and the connection keeps working', async () => {
    const w = await connect(['--threads', '2']);
    // Judged once the server has settled every call, by what it decided and what reached the wire, not by how soon.
    const calls: { id: unknown; used: boolean }[] = [];
    for (let i = 0; i < 40; i++) {
      const controller = new AbortController();
      const call = w.client.callTool({ name: 'spin', arguments: { ms: 4, stageMs: 1, tag: i } }, undefined, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort('racing'), 2 + (i % 5));
      const used = await call.then(
        () => true,
        () => false,
      );
      calls.push({ id: toolCallId(w, (a) => a.tag === i), used });
    }
    // One more round, made late on purpose: the abort fires as the response reaches the client, so the
    // cancel leaves after completion won. The response is on the wire, and the caller never gets it.
    {
      const controller = new AbortController();
      const onmessage = w.transport.onmessage!;
      // eslint-disable-next-line prefer-const -- set by the send below, read by the tap above it
      let id: unknown;
      w.transport.onmessage = (m) => {
        if (!('method' in m) && 'id' in m && m.id === id) controller.abort('late on purpose');
        onmessage(m);
      };
      const call = w.client.callTool({ name: 'spin', arguments: { ms: 4, stageMs: 1, tag: 'late' } }, undefined, {
        signal: controller.signal,
      });
      id = toolCallId(w, (a) => a.tag === 'late');
      const used = await call.then(
        () => true,
        () => false,
      );
      w.transport.onmessage = onmessage;
      expect(used).toBe(false);
      expect(responsesFor(w, id)).toHaveLength(1);
      calls.push({ id, used });
    }
    let s = await stats(w.client);
    for (let tries = 0; s.inFlight > 0 && tries < 500; tries++) {
      await sleep(20);
      s = await stats(w.client);
    }
    expect(s.inFlight).toBe(0);
    // Every completion's response is on its way; wait for it to land (a cancelled call adds none, ever).
    const onWire = () => calls.reduce((n, c) => n + responsesFor(w, c.id).length, 0);
    await until(() => onWire() >= s.completed, 10_000, 'the responses of the completed calls');
    await sleep(50); // an extra, wrong response would show up here
    let answered = 0;
    let late = 0;
    let silent = 0;
    for (const c of calls) {
      const replies = responsesFor(w, c.id).length;
      expect(replies).toBeLessThanOrEqual(1);
      if (c.used) {
        expect(replies).toBe(1);
        answered++;
      } else if (replies === 1)
        late++; // arrived after the abort: accepted on the wire, never handed to the caller
      else silent++;
    }
    expect(late).toBeGreaterThan(0);
    // Each call ended exactly one way: a response means completion won, silence means cancellation did.
    expect(s.completed).toBe(answered + late);
    expect(s.cancelled).toBe(silent);
    expect(answered + late + silent).toBe(41);
    const after = await w.client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(after.isError).toBeFalsy();
  });

  it('cancels for unknown ids and for ids of other types are ignored without a reply', async () => {
    const w = await connect(['--threads', '1']);
    const controller = new AbortController();
    let progress = 0;
    const call = w.client.callTool({ name: 'spin', arguments: { ms: 600, stageMs: 1 } }, undefined, {
      signal: controller.signal,
      onprogress: () => progress++,
    });
    await until(() => progress > 0, 10_000, 'first progress');
    const id = toolCallId(w, (a) => a.ms === 600) as number;
    const before = w.received.filter((m) => !('method' in m && m.method === 'notifications/progress')).length;
    await w.client.notification({ method: 'notifications/cancelled', params: { requestId: 987654 } });
    await w.client.notification({ method: 'notifications/cancelled', params: { requestId: String(id) } }); // "3" is not 3
    await sleep(100);
    expect(w.received.filter((m) => !('method' in m && m.method === 'notifications/progress')).length).toBe(before);
    const result = await call; // the real request was untouched
    expect(result.isError).toBeFalsy();
    expect(await stats(w.client)).toMatchObject({ completed: 1, cancelled: 0, unknownCancelsIgnored: 2 });
  });

  it('storm: completion and cancellation race concurrently; each call ends exactly one way', async () => {
    const w = await connect(['--threads', '2', '--queue-limit', '1000']);
    const n = 300;
    const calls = Array.from({ length: n }, (_, i) => {
      const controller = new AbortController();
      const ms = (i * 7) % 4;
      const p = w.client.callTool({ name: 'spin', arguments: { ms, stageMs: 0.5, tag: i } }, undefined, {
        signal: controller.signal,
        timeout: 120_000,
      });
      const when = (i * 13) % 20;
      if (i % 5 !== 0) setTimeout(() => controller.abort('storm'), when);
      return p.then(
        () => 'answered' as const,
        () => 'aborted' as const,
      );
    });
    const local = await Promise.all(calls);
    await until(async () => (await stats(w.client)).inFlight === 0, 20_000, 'all jobs settled');
    await sleep(100);
    let silent = 0;
    for (let i = 0; i < n; i++) {
      const id = toolCallId(w, (a) => a.tag === i);
      const replies = responsesFor(w, id);
      expect(replies.length).toBeLessThanOrEqual(1);
      if (replies.length === 0) silent++;
      else expect(replies[0]).toHaveProperty('result'); // never an error for a raced call
      if (local[i] === 'answered') expect(replies).toHaveLength(1);
    }
    const s = await stats(w.client);
    expect(s.cancelled).toBe(silent);
    expect(s.completed + s.cancelled).toBe(n);
    expect(s.responsesDropped).toBe(0);
    expect(silent).toBeGreaterThan(0);
    expect(silent).toBeLessThan(n);
  });
});
