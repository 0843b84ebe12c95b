/** The bench's paired ratios (src/probe/stats.ts): each round's a/b, and their median. */
import { describe, expect, it } from 'vitest';
import { pairedRatio, pairedRatios } from '../../dist/src/probe/stats.js';

interface W {
  round: number;
  server: string;
  v: number;
}

const windows: W[] = [
  { round: 0, server: 'a', v: 10 },
  { round: 0, server: 'b', v: 5 },
  { round: 1, server: 'b', v: 4 },
  { round: 1, server: 'a', v: 2 },
  { round: 2, server: 'a', v: 9 }, // b missing in this round: not paired
  { round: 3, server: 'a', v: 3 },
  { round: 3, server: 'b', v: 0 }, // a zero divisor: not paired
  { round: 4, server: 'a', v: 6 },
  { round: 4, server: 'b', v: 6 },
];
const a = (w: W) => w.server === 'a';
const b = (w: W) => w.server === 'b';

describe('paired ratios', () => {
  it('pairs a with b within each round, skipping rounds without both or with a zero divisor', () => {
    expect(pairedRatios(windows, a, b, (w) => w.v)).toEqual([2, 0.5, 1]);
  });

  it('the paired ratio is the median of the rounds, not the ratio of medians', () => {
    // The ratio of medians would be 6 / 4.5 here.
    expect(pairedRatio(windows, a, b, (w) => w.v)).toBe(1);
    // Reversed, round 3 pairs (0 / 3) and round 2 still does not: median of [0.5, 2, 0, 1].
    expect(pairedRatios(windows, b, a, (w) => w.v)).toEqual([0.5, 2, 0, 1]);
    expect(pairedRatio(windows, b, a, (w) => w.v)).toBe(0.75);
  });
});
