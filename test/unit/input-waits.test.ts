/**
 * Parked 2026 calls on their own, over an in-process backend: a parked call's signed state opens once, for its
 * caller and tool only; a retry's answers are vetted first (a refused retry leaves the call parked); a wait with no
 * retry, and a closed caller, cancel the job through the backend's race; the counters follow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InputWaits, INPUT_WAIT_SESSION } from '../../dist/src/asks/input-waits.js';
import { InputCall, type Exchange } from '../../dist/src/asks/input-call.js';
import { ScriptedBackend, settled } from './scripted-backend.js';

function exchange(tool = 'ask-tool', capabilities: Record<string, unknown> = { elicitation: {} }): Exchange {
  return { options: { tool, args: {} }, capabilities };
}

const waits: InputWaits[] = [];
function setup(waitMs = 60_000) {
  const backend = new ScriptedBackend();
  const w = new InputWaits(backend, { waitMs });
  waits.push(w);
  return { backend, waits: w };
}
afterEach(() => {
  for (const w of waits.splice(0)) w.close();
});

/** A call that asked the client once and was parked for `caller`; returns the state and the job. */
async function parked(w: InputWaits, backend: ScriptedBackend, caller = 'c') {
  const handle = w.reserve();
  const input = new InputCall(handle, exchange());
  const job = backend.call(INPUT_WAIT_SESSION, handle.id);
  const answer = job.ask('elicitation/create', { message: 'ok?', requestedSchema: { type: 'object', properties: {} } });
  const round = await input.round(exchange());
  expect(round.kind).toBe('input');
  const state = await w.park(input, caller);
  return { state, input, job, answer };
}

describe('InputWaits', () => {
  it('a state opens once, for its caller and tool: a second retry is refused as used', async () => {
    const { backend, waits: w } = setup();
    const { state, input } = await parked(w, backend);
    expect(w.stats()).toMatchObject({ inputRequired: 1, inputWaiting: 1 });
    expect(w.claim(state, 'c', 'ask-tool')).toBe(input);
    expect(w.claim(state, 'c', 'ask-tool')).toMatchObject({ reason: 'used' });
    expect(w.stats()).toMatchObject({ inputRetries: 1, inputWaiting: 0, requestStatesRefused: 1 });
  });

  it('another caller, another tool, an altered state: refused, and the call stays parked for its own retry', async () => {
    const { backend, waits: w } = setup();
    const { state, input } = await parked(w, backend);
    expect(w.claim(state, 'someone-else', 'ask-tool')).toMatchObject({ reason: 'forged' });
    expect(w.claim(state, 'c', 'other-tool')).toMatchObject({ reason: 'wrong_tool' });
    expect(w.claim(state.slice(0, -2) + 'AA', 'c', 'ask-tool')).toMatchObject({ reason: 'forged' });
    expect(w.claim(state, 'c', 'ask-tool')).toBe(input);
    expect(w.stats().requestStatesRefused).toBe(3);
  });

  it('a retry whose answers do not check is refused and leaves the call parked', async () => {
    const { backend, waits: w } = setup();
    const { state, input } = await parked(w, backend);
    expect(w.claim(state, 'c', 'ask-tool', () => 'not an ElicitResult')).toEqual({
      reason: 'invalid_responses',
      message: 'not an ElicitResult',
    });
    expect(w.claim(state, 'c', 'ask-tool', () => undefined)).toBe(input);
  });

  it('no retry within the wait: the job is cancelled through the backend, its ask rejected, and counted', async () => {
    const { backend, waits: w } = setup(15);
    const { job, answer } = await parked(w, backend);
    await expect(answer).rejects.toThrow(/not needed: the call stopped/);
    expect(job.state).toBe('cancelled');
    await settled();
    expect(backend.cancels.at(-1)).toMatchObject({
      result: 'cancelled-running',
      reason: expect.stringMatching(/no retry within 15 ms/),
    });
    expect(w.stats()).toMatchObject({ inputWaitsExpired: 1, inputWaiting: 0 });
  });

  it('a job that completed while parked is not cancelled when its wait runs out (nothing counted)', async () => {
    const { backend, waits: w } = setup(15);
    const { job } = await parked(w, backend);
    expect(job.complete()).toBe(true);
    await new Promise((r) => setTimeout(r, 40));
    expect(backend.cancels).toEqual([]);
    expect(w.stats().inputWaitsExpired).toBe(0);
  });

  it('cancelOwner cancels only that caller’s parked calls', async () => {
    const { backend, waits: w } = setup();
    const mine = await parked(w, backend, 'c');
    const theirs = await parked(w, backend, 'd');
    w.cancelOwner('c', 'connection closed');
    await expect(mine.answer).rejects.toThrow(/not needed/);
    expect(mine.job.state).toBe('cancelled');
    expect(theirs.job.state).toBe('running');
    expect(w.stats().inputWaiting).toBe(1);
    expect(w.stats().inputWaitsExpired).toBe(0); // a close is not an expiry
  });

  it('refuses a wait that is not a positive whole number of ms', () => {
    expect(() => new InputWaits(new ScriptedBackend(), { waitMs: 0 })).toThrow(RangeError);
    expect(() => new InputWaits(new ScriptedBackend(), { waitMs: 1.5 })).toThrow(RangeError);
  });
});
