/**
 * One request's call object (src/server/tool-call.ts): every edge of its
 * drawing, each move refused from every phase it does not start at, and
 * what a phase says about the job a cancel of the request reaches.
 */
import { describe, expect, it } from 'vitest';
import { CALL_EDGES, ToolCall, type PhaseName } from '../../dist/src/server/tool-call.js';
import type { CallHandle } from '../../dist/src/backend/backend.js';

const job = (id = 1): CallHandle => ({
  session: 's',
  id,
  state: 'queued',
  start: () => new Promise(() => undefined),
  abandon: () => undefined,
});

const DRAWN = [
  'reserved → reserved (early cancel)',
  'reserved → running (begin)',
  'reserved → detached (detach)',
  'reserved → gone (leave)',
  'running → detached (detach)',
  'detached → running (reattach)',
  'running → settled (settle)',
  'running → gone (leave)',
  'detached → gone (leave)',
  'settled → gone (leave)',
];

/** A plain call moved to `phase` along legal edges. */
function at(phase: PhaseName, kind: 'plain' | 'windowed' = 'plain'): { call: ToolCall; j: CallHandle } {
  const j = job();
  const call = new ToolCall(7, kind, 'modern', kind === 'plain' ? { job: j } : {});
  if (phase === 'reserved') return { call, j };
  call.begin(j);
  if (phase === 'running') return { call, j };
  if (phase === 'detached') call.detach();
  else if (phase === 'settled') call.settle(false);
  else call.leave();
  return { call, j };
}

describe('a call object', () => {
  it('has exactly the drawn edges', () => {
    expect(CALL_EDGES.map((e) => `${e.from} → ${e.to} (${e.on})`)).toEqual(DRAWN);
  });

  it('reserved → running → settled → gone: the request leads to its job until it is gone', () => {
    const j = job();
    const call = new ToolCall(1, 'plain', 'legacy', { job: j });
    expect([call.phase.phase, call.job]).toEqual(['reserved', j]);
    expect(call.begin(j)).toBeUndefined();
    expect([call.phase.phase, call.job]).toEqual(['running', j]);
    expect(call.settle(true)).toBe(true);
    expect(call.phase).toEqual({ phase: 'settled', job: j, silent: true });
    expect(call.job).toBe(j);
    expect(call.leave()).toEqual({ phase: 'settled', job: j, silent: true });
    expect([call.phase.phase, call.job]).toEqual(['gone', undefined]);
  });

  it('reserved → gone: answered before its handler ran (its reservation is what leave hands back)', () => {
    const { call, j } = at('reserved');
    expect(call.leave()).toMatchObject({ phase: 'reserved', job: j });
    expect(call.phase.phase).toBe('gone');
  });

  it('reserved → detached (answered as a task at once) → gone', () => {
    const call = new ToolCall(2, 'task', 'legacy');
    expect(call.job).toBeUndefined();
    call.detach();
    expect(call.phase.phase).toBe('detached');
    expect(call.leave().phase).toBe('detached');
    expect(call.phase.phase).toBe('gone');
  });

  it('running → detached → running (a windowed call became a task, then the store refused it) → gone', () => {
    const { call, j } = at('running', 'windowed');
    call.detach(job(99)); // another job: the request does not lead to it, so nothing moves
    expect(call.phase.phase).toBe('running');
    call.detach(j);
    expect([call.phase.phase, call.job]).toEqual(['detached', undefined]);
    expect(call.settle(false)).toBe(false); // a detached request's handler has nothing to settle
    call.reattach(j);
    expect([call.phase.phase, call.job]).toEqual(['running', j]);
    expect(call.leave().phase).toBe('running');
    expect(call.phase.phase).toBe('gone');
  });

  it('reserved → reserved: a windowed call keeps the first cancel before its job exists, and hands it over as it begins', () => {
    const call = new ToolCall(3, 'windowed', 'modern');
    expect(call.keepEarlyCancel({ reason: 'first', source: 'notification' })).toBe(true);
    expect(call.keepEarlyCancel({ reason: 'second', source: 'closed_stream' })).toBe(true);
    expect(call.phase.phase).toBe('reserved');
    const j = job();
    expect(call.begin(j)).toEqual({ reason: 'first', source: 'notification' });
    expect(call.keepEarlyCancel({ reason: 'late', source: 'notification' })).toBe(false); // it has a job now
  });

  it('only a windowed call keeps an early cancel: any other reserved call has its job (or none) to reach', () => {
    for (const kind of ['plain', 'task', 'rounds', 'unpooled'] as const)
      expect(new ToolCall(4, kind, 'modern').keepEarlyCancel({ reason: 'x', source: 'notification' })).toBe(false);
  });

  it("a retry's parked call is held while reserved only", () => {
    const parked = { parked: true };
    const j = job();
    const call = new ToolCall(5, 'rounds', 'modern', { job: j, resume: parked });
    expect(call.resume).toBe(parked);
    call.begin(j);
    expect(call.resume).toBeUndefined();
  });

  describe('illegal moves are refused, the phase kept', () => {
    const moves = {
      begin: (c: ToolCall) => c.begin(job(2)),
      detach: (c: ToolCall) => c.detach(),
      reattach: (c: ToolCall) => c.reattach(job(2)),
      settle: (c: ToolCall) => c.settle(false),
    } as const;
    const legal: Record<keyof typeof moves, PhaseName[]> = {
      begin: ['reserved'],
      detach: ['reserved', 'running'],
      reattach: ['detached'],
      settle: ['running'],
    };
    const phases: PhaseName[] = ['reserved', 'running', 'detached', 'settled', 'gone'];
    for (const [name, move] of Object.entries(moves) as [keyof typeof moves, (c: ToolCall) => unknown][])
      for (const from of phases.filter((p) => !legal[name].includes(p)))
        it(`${name} from ${from}`, () => {
          const { call } = at(from);
          const before = call.phase;
          move(call);
          expect(call.phase).toBe(before);
        });
    it('leave from gone: gone is never left', () => {
      const { call } = at('gone');
      expect(call.leave()).toEqual({ phase: 'gone' });
      expect(call.phase.phase).toBe('gone');
    });
  });
});
