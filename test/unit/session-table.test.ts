/**
 * The 2025 HTTP sessions' table (src/transport/http/session-table.ts): every
 * edge of its drawing, the illegal ones refused, and the limits (the
 * server's, each caller's) counting opening sessions so that concurrent
 * initializes cannot overshoot them.
 */
import { describe, expect, it } from 'vitest';
import {
  SESSION_EDGES,
  SessionTable,
  type SessionSlot,
  type SessionState,
} from '../../dist/src/transport/http/session-table.js';

/** A slot for `owner`, which the test expects to be given. */
function slotOf<S>(t: SessionTable<S>, owner = 'alice'): SessionSlot<S> {
  const slot = t.open(owner);
  if (typeof slot === 'string') throw new Error(`refused: ${slot}`);
  return slot;
}

const STATES: SessionState[] = ['opening', 'live', 'gone'];
const DRAWN = ['opening → live', 'opening → gone', 'live → gone'];

describe('the HTTP session table', () => {
  it('has exactly the drawn edges', () => {
    expect(STATES.flatMap((from) => SESSION_EDGES[from].map((to) => `${from} → ${to}`))).toEqual(DRAWN);
  });

  it('opening → live: found by its id only once accepted; live → gone: not found any more', () => {
    const t = new SessionTable<string>(2);
    const slot = slotOf(t);
    expect(slot.state).toBe('opening');
    expect(t.get('a')).toBeUndefined();
    expect(t.openingNow).toBe(1);
    expect(slot.accept('a', 'session a')).toBe(true);
    expect([slot.state, t.get('a'), t.size, t.openingNow]).toEqual(['live', 'session a', 1, 0]);
    expect(slot.accept('b', 'again')).toBe(false); // live → live is no edge
    expect(slot.close()).toBe(true);
    expect([slot.state, t.get('a'), t.size]).toEqual(['gone', undefined, 0]);
    expect(slot.close()).toBe(false); // gone is never left
    expect(slot.accept('a', 'back')).toBe(false);
    expect(t.get('a')).toBeUndefined();
  });

  it('opening → gone (the transport refused the initialize): its place is freed, it was never found', () => {
    const t = new SessionTable<string>(1);
    const slot = slotOf(t);
    expect(t.open('alice')).toBe('server-limit'); // the opening one holds the only place
    expect(slot.close()).toBe(true);
    expect([slot.state, t.size, t.openingNow]).toEqual(['gone', 0, 0]);
    expect(slot.accept('late', 'x')).toBe(false);
    expect(slotOf(t).state).toBe('opening');
  });

  it('the limit counts live and opening sessions together', () => {
    const t = new SessionTable<number>(3);
    const a = slotOf(t);
    const b = slotOf(t);
    const c = slotOf(t);
    expect(t.open('alice')).toBe('server-limit');
    a.accept('a', 1);
    b.accept('b', 2);
    expect(t.open('alice')).toBe('server-limit'); // two live, one still opening
    c.close();
    expect(slotOf(t).state).toBe('opening');
    expect(t.open('alice')).toBe('server-limit');
    a.close();
    expect(t.entries()).toEqual([['b', 2]]);
  });

  it("each caller's limit counts its own opening and live sessions; the server's counts everyone's", () => {
    const t = new SessionTable<number>(4, 2);
    const a1 = slotOf(t, 'alice');
    slotOf(t, 'alice').accept('a2', 2);
    expect(t.open('alice')).toBe('owner-limit'); // one live, one opening
    const b1 = slotOf(t, 'bob');
    slotOf(t, 'bob');
    expect(t.open('carol')).toBe('server-limit');
    a1.close(); // refused before it was live: alice has room again
    expect(slotOf(t, 'alice').owner).toBe('alice');
    b1.accept('b1', 3);
    b1.close(); // live → gone: bob's place and the server's are freed
    expect(t.entries()).toEqual([['a2', 2]]);
    expect(slotOf(t, 'bob').owner).toBe('bob'); // alice 2 (a2, opening), bob 2 (opening)
    expect(t.open('carol')).toBe('server-limit');
    expect(t.open('bob')).toBe('owner-limit');
  });

  it("without a per-caller limit below the server's, one caller may fill the server (and is told so by the server's)", () => {
    const t = new SessionTable<number>(2);
    slotOf(t, 'local');
    slotOf(t, 'local');
    expect(t.open('local')).toBe('server-limit');
  });
});
