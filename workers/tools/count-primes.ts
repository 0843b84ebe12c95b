/**
 * `count_primes`: π(limit), the largest prime ≤ limit and the twin-prime pairs,
 * by a segmented sieve of Eratosthenes over odd numbers with a cancellation
 * check per segment.
 */
import { z } from 'zod';
import { defineTool, stage } from '../../src/stages/tool.js';

/** Numbers per segment; the sieve holds only the odd half (512 KiB), which stays in cache. */
const SEGMENT = 1 << 20;

const input = z.object({
  limit: z
    .number()
    .int()
    .min(2)
    .max(5e9)
    .default(1e7)
    .describe('Count primes up to and including this number, 2–5,000,000,000 (default 10,000,000).'),
});
type Input = z.infer<typeof input>;

interface Counts {
  limit: number;
  count: number;
  largest: number;
  twinPairs: number;
}

/** Odd primes up to `n`, by a plain sieve (n is at most √5e9 ≈ 70,711). */
function oddPrimesUpTo(n: number): Uint32Array {
  const composite = new Uint8Array(n + 1);
  const primes: number[] = [];
  for (let i = 3; i <= n; i += 2) {
    if (composite[i]) continue;
    primes.push(i);
    for (let j = i * i; j <= n; j += 2 * i) composite[j] = 1;
  }
  return Uint32Array.from(primes);
}

export const countPrimes = defineTool({
  name: 'count_primes',
  title: 'Count primes',
  description:
    'Counts the primes up to `limit` with a segmented sieve of Eratosthenes, and reports the largest prime ≤ limit and the number of twin-prime pairs (p, p+2) with p+2 ≤ limit. About 1 s per billion on one core.',
  input,
  output: z.strictObject({
    limit: z.number().int().describe('The limit counted up to (inclusive).'),
    count: z.number().int().min(0).describe('Primes up to the limit.'),
    largest: z.number().int().describe('The largest prime up to the limit.'),
    twinPairs: z.number().int().min(0).describe('Pairs of primes two apart, both up to the limit.'),
  }),
  stages: [
    stage('base primes', (args: Input) => ({
      limit: args.limit,
      base: oddPrimesUpTo(Math.floor(Math.sqrt(args.limit))),
    })),
    stage('sieve', ({ limit, base }: { limit: number; base: Uint32Array }, ctx): Counts => {
      const odds = new Uint8Array(SEGMENT / 2);
      const segments = Math.ceil(limit / SEGMENT);
      // 2 is handled apart: the segments hold odd numbers only.
      let count = 1;
      let previous = 2;
      let twinPairs = 0;
      for (let s = 0; s < segments; s++) {
        ctx.checkpoint();
        const low = s * SEGMENT + 1; // odd: slot i holds low + 2i
        const high = Math.min(low + SEGMENT - 1, limit);
        const slots = Math.floor((high - low) / 2) + 1;
        odds.fill(0, 0, slots);
        if (s === 0) odds[0] = 1; // 1 is not prime
        for (let k = 0; k < base.length; k++) {
          const p = base[k]!;
          const square = p * p;
          if (square > high) break;
          // First odd multiple of p in the segment, but never p itself.
          let start = square >= low ? square : Math.ceil(low / p) * p;
          if (start % 2 === 0) start += p;
          for (let i = (start - low) / 2; i < slots; i += p) odds[i] = 1;
        }
        for (let i = 0; i < slots; i++) {
          if (odds[i]) continue;
          const n = low + 2 * i;
          count++;
          if (n - previous === 2) twinPairs++;
          previous = n;
        }
        ctx.progress(s + 1, segments, `sieved ${high} of ${limit}`);
      }
      return { limit, count, largest: previous, twinPairs };
    }),
    stage('report', (c: Counts) => ({
      content: [
        {
          type: 'text' as const,
          text: `${c.count} primes ≤ ${c.limit}; the largest is ${c.largest}; ${c.twinPairs} twin-prime pairs.`,
        },
      ],
      structuredContent: { ...c },
    })),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' }, // long CPU work: a client may run it as a task
});
