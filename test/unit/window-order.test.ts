/** The order of scenario 3's windows (bench/lib/zero-work.ts): every server first in turn, none always behind the same one. */
import { describe, expect, it } from 'vitest';
import { windowOrder } from '../../bench/lib/zero-work.js';

describe('windowOrder', () => {
  it('runs every server once a round, starts one further each round, and puts two different servers before each', () => {
    const servers = 6;
    const rounds = Array.from({ length: 8 }, (_, r) => windowOrder(r, servers));
    for (const order of rounds) expect([...order].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(rounds.map((o) => o[0])).toEqual([0, 1, 2, 3, 4, 5, 0, 1]);
    const before = new Map<number, Set<number>>();
    for (const order of rounds)
      order.slice(1).forEach((s, i) => (before.get(s) ?? before.set(s, new Set()).get(s)!).add(order[i]!));
    for (let s = 0; s < servers; s++) expect(before.get(s)?.size).toBe(2);
  });

  it('is a plain order for two servers, alternating which goes first', () => {
    expect([0, 1, 2, 3].map((r) => windowOrder(r, 2))).toEqual([
      [0, 1],
      [1, 0],
      [0, 1],
      [1, 0],
    ]);
  });
});
