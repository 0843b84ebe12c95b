/** Percentiles, summaries and CDF points. All times are milliseconds. */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Linear-interpolated percentile of an ascending array (q in 0..1). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    p99: quantile(s, 0.99),
    max: s.length ? s[s.length - 1]! : Number.NaN,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** Each round's a/b, for the rounds in which both ran (in the order the rounds first appear). */
export function pairedRatios<W extends { round: number }>(
  windows: readonly W[],
  a: (w: W) => boolean,
  b: (w: W) => boolean,
  value: (w: W) => number,
): number[] {
  const ratios: number[] = [];
  for (const round of new Set(windows.map((w) => w.round))) {
    const x = windows.find((w) => w.round === round && a(w));
    const y = windows.find((w) => w.round === round && b(w));
    if (x && y && value(y) > 0) ratios.push(value(x) / value(y));
  }
  return ratios;
}

/**
 * Median over rounds of a/b measured in the same round: windows that ran
 * back to back share the machine's momentary load, so their ratio drifts
 * less than a ratio of medians.
 */
export function pairedRatio<W extends { round: number }>(
  windows: readonly W[],
  a: (w: W) => boolean,
  b: (w: W) => boolean,
  value: (w: W) => number,
): number {
  return median(pairedRatios(windows, a, b, value));
}

/** Empirical CDF as at most `points` (value, fraction) pairs, for plotting. */
export function cdf(values: readonly number[], points = 200): { ms: number; fraction: number }[] {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return [];
  const step = Math.max(1, Math.floor(s.length / points));
  const out: { ms: number; fraction: number }[] = [];
  for (let i = 0; i < s.length; i += step) out.push({ ms: s[i]!, fraction: (i + 1) / s.length });
  if (out[out.length - 1]!.fraction !== 1) out.push({ ms: s[s.length - 1]!, fraction: 1 });
  return out;
}

/** Rounds to microseconds, to keep the JSON small and honest about precision. */
export function us(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** A number for a table: 3 significant digits, no exponent. */
export function fmt(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toFixed(3);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Round-robin: runs `step(item, round)` over the items until each has run `rounds(item)` times. */
export async function alternate<T>(
  items: readonly T[],
  rounds: (item: T) => number,
  step: (item: T, round: number) => Promise<void>,
): Promise<void> {
  const max = Math.max(0, ...items.map(rounds));
  for (let r = 0; r < max; r++) {
    for (const item of items) if (r < rounds(item)) await step(item, r);
  }
}
