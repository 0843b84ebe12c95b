/**
 * The 2025 HTTP sessions' table (src/transport/http/session-table.ts): every
 * edge of its drawing, the illegal ones refused, and the limit counting
 * opening sessions so that concurrent initializes cannot overshoot it.
 */
import { describe, expect, it } from 'vitest';
import { SESSION_EDGES, SessionTable, type SessionState } from '../../dist/src/transport/http/session-table.js';

const STATES: SessionState[] = ['opening', 'live', 'gone'];
const DRAWN = ['opening → live', 'opening → gone', 'live → gone'];

describe('the HTTP session table', () => {
  it('has exactly the drawn edges', () => {
    expect(STATES.flatMap((from) => SESSION_EDGES[from].map((to) => `${from} → ${to}`))).toEqual(DRAWN);
  });

  it('opening → live: found by its id only once accepted; live → gone: not found any more', () => {
    const t = new SessionTable<string>(2);
    const slot = t.open()!;
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
    const slot = t.open()!;
    expect(t.open()).toBeUndefined(); // the opening one holds the only place
    expect(slot.close()).toBe(true);
    expect([slot.state, t.size, t.openingNow]).toEqual(['gone', 0, 0]);
    expect(slot.accept('late', 'x')).toBe(false);
    expect(t.open()).toBeDefined();
  });

  it('the limit counts live and opening sessions together', () => {
    const t = new SessionTable<number>(3);
    const a = t.open()!;
    const b = t.open()!;
    const c = t.open()!;
    expect(t.open()).toBeUndefined();
    a.accept('a', 1);
    b.accept('b', 2);
    expect(t.open()).toBeUndefined(); // two live, one still opening
    c.close();
    const d = t.open()!;
    expect(d).toBeDefined();
    expect(t.open()).toBeUndefined();
    a.close();
    expect(t.entries()).toEqual([['b', 2]]);
  });
});
