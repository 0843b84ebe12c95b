/**
 * The front end's remote call as a table (src/remote/lua/call-states.ts,
 * FRONT_EDGES) and its guarded methods (src/remote/front/front-state.ts):
 * each method moves along its edges only, every state is reached, `settled`
 * is never left, and every pair not in the table is refused. remote-call.ts
 * changes its state only through these methods (read from its source).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FrontCallState, isFrontEdge } from '../../dist/src/remote/front/front-state.js';
import { FRONT_EDGES, type FrontStateName, type Submission } from '../../dist/src/remote/lua/call-states.js';
import type { CancelResult, JobOutcome } from '../../dist/src/backend/backend.js';

const STATES: FrontStateName[] = ['reserved', 'submitting', 'queued', 'running', 'cancelling', 'settled'];
/** The drawing's edges, written out independently of the module. */
const DRAWN: ReadonlyArray<readonly [FrontStateName, FrontStateName]> = [
  ['reserved', 'submitting'],
  ['reserved', 'running'],
  ['reserved', 'settled'],
  ['submitting', 'queued'],
  ['submitting', 'running'],
  ['submitting', 'cancelling'],
  ['submitting', 'settled'],
  ['queued', 'running'],
  ['queued', 'cancelling'],
  ['queued', 'settled'],
  ['running', 'running'],
  ['running', 'cancelling'],
  ['running', 'settled'],
  ['cancelling', 'settled'],
];

const job = (jobId = 'j'): Submission => ({ jobId, options: { tool: 't', args: {} }, inRedis: Promise.resolve(true) });
const DONE: JobOutcome = { kind: 'completed', result: { content: [] } } as unknown as JobOutcome;
const decision: Promise<CancelResult> = Promise.resolve('cancelled-queued');

/** A call driven into `state` through the methods themselves. */
function at(state: FrontStateName): FrontCallState {
  const c = new FrontCallState();
  const j = job();
  if (state === 'reserved') return c;
  if (state === 'settled') return (c.settle(DONE), c);
  c.submit(j);
  if (state === 'submitting') return c;
  c.added(j);
  if (state === 'queued') return c;
  if (state === 'cancelling') return (c.cancelling(decision), c);
  c.taken('h');
  return c;
}

/** Every guarded method, tried on a call in any state: the state it lands in, or undefined if it refused. */
const METHODS: Record<string, (c: FrontCallState) => boolean> = {
  submit: (c) => c.submit(job('new')),
  adopted: (c) => c.adopted(job('adopted')),
  added: (c) => c.state.kind !== 'reserved' && c.state.kind !== 'settled' && c.added(c.state.job),
  taken: (c) => c.taken('h2'),
  seen: (c) => c.seen('h3', 5),
  cancelling: (c) => c.cancelling(decision),
  settle: (c) => c.settle(DONE) !== undefined,
};

describe("the front end's remote call", () => {
  it('the table is the drawing: exactly these edges', () => {
    const table = STATES.flatMap((from) => FRONT_EDGES[from].map((to) => [from, to] as const));
    expect(table).toEqual(DRAWN);
    for (const from of STATES)
      for (const to of STATES)
        expect(isFrontEdge(from, to), `${from} → ${to}`).toBe(DRAWN.some(([f, t]) => f === from && t === to));
  });

  it('each method, from each state, moves along an edge of the table or refuses and changes nothing', () => {
    const moved = new Set<string>();
    for (const from of STATES) {
      for (const [name, method] of Object.entries(METHODS)) {
        const c = at(from);
        expect(c.state.kind).toBe(from);
        const before = c.state;
        const ok = method(c);
        if (!ok) {
          expect(c.state, `${name} from ${from}`).toBe(before);
          continue;
        }
        expect(isFrontEdge(from, c.state.kind), `${name}: ${from} → ${c.state.kind}`).toBe(true);
        moved.add(`${from} → ${c.state.kind}`);
      }
    }
    // Every edge of the table is some method's: none is dead.
    expect(DRAWN.map(([f, t]) => `${f} → ${t}`).filter((e) => !moved.has(e))).toEqual([]);
  });

  it('settled is never left; a second settle returns undefined and keeps the first outcome', () => {
    const c = at('running');
    expect(c.settle(DONE)?.kind).toBe('running');
    const cancelled: JobOutcome = { kind: 'cancelled', from: 'running', hardKilled: false };
    expect(c.settle(cancelled)).toBeUndefined();
    expect(c.state).toEqual({ kind: 'settled', outcome: DONE });
    for (const method of Object.values(METHODS)) expect(method(c)).toBe(false);
  });

  it('added moves only its own submission; cancelling keeps where it came from; seen keeps hostlessSince', () => {
    const c = at('submitting');
    expect(c.added(job('another'))).toBe(false);
    expect(c.state.kind).toBe('submitting');
    expect(c.cancelling(decision)).toBe(true);
    expect(c.state).toMatchObject({ kind: 'cancelling', from: 'queued' });
    expect(c.cancelling(decision)).toBe(false); // one cancel, one decision
    const r = at('running');
    expect(r.seen('h9', 42)).toBe(true);
    expect(r.state).toMatchObject({ kind: 'running', host: 'h9', hostlessSince: 42 });
    expect(r.seen('h9')).toBe(true);
    expect(r.state).not.toHaveProperty('hostlessSince');
    expect(at('running').cancelling(decision)).toBe(true);
  });

  it('remote-call.ts never assigns its state itself: every move goes through FrontCallState', () => {
    const source = readFileSync(new URL('../../src/remote/front/remote-call.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/this\.current\s*=/);
    expect(source).toMatch(/new FrontCallState\(\)/);
  });
});
