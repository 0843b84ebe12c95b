/**
 * The checkpoint-gap ledger on its own, with a fake clock: per tool, calls,
 * calls over budget, the worst gap and its stage; the warning line, at most
 * one per tool per WARN_EVERY_MS, the next one saying how many it stands
 * for. And the worker side of the shared words (gapWords, writeGap). The
 * measurement itself over the real pool is test/checkpoint-gaps.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CheckpointGaps, WARN_EVERY_MS } from '../../dist/src/executor/checkpoint-gaps.js';
import { gapWords, writeGap } from '../../dist/src/state/gap-clock.js';
import { defineTool, stage, type ToolDefinition } from '../../dist/src/stages/tool.js';

const input = z.object({});
const fast = defineTool({
  name: 'fast',
  description: 'budget 50',
  input,
  cancelWithinMs: 50,
  stages: [stage('parse', (x) => x), stage('work', (x) => x)],
}) as unknown as ToolDefinition;
const plain = defineTool({
  name: 'plain',
  description: 'default budget',
  input,
  stages: [
    function crunch(x: unknown) {
      return x;
    },
  ],
}) as unknown as ToolDefinition;

function ledger() {
  const lines: string[] = [];
  const clock = { now: 0 };
  const gaps = new CheckpointGaps(
    (line) => lines.push(line),
    () => clock.now,
  );
  return { gaps, lines, clock };
}

describe('CheckpointGaps', () => {
  it('keeps calls, calls over budget, the worst gap and its stage per tool', () => {
    const { gaps } = ledger();
    expect(gaps.record(fast, 10, 0)).toEqual({ ms: 10, stage: 'parse', budgetMs: 50 });
    gaps.record(fast, 70, 1);
    gaps.record(fast, 30, 0);
    gaps.record(plain, 100, 0); // equal to the budget is within it
    expect(gaps.snapshot()).toEqual({
      fast: { cancelWithinMs: 50, calls: 3, overBudget: 1, worstMs: 70, worstStage: 'work', lastMs: 30 },
      plain: { cancelWithinMs: 100, calls: 1, overBudget: 0, worstMs: 100, worstStage: 'crunch', lastMs: 100 },
    });
  });

  it('names the gap that ended after the last stage "result"', () => {
    const { gaps } = ledger();
    expect(gaps.record(fast, 5, 2).stage).toBe('result');
  });

  it('warns once per tool per interval, naming the tool, the stage and the gap; the next line counts the unwarned', () => {
    const { gaps, lines, clock } = ledger();
    gaps.record(fast, 80, 1);
    gaps.record(fast, 90, 1);
    gaps.record(fast, 20, 1); // within budget: neither warned nor counted
    gaps.record(plain, 150, 0); // another tool has its own limit
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^tool 'fast' stage 'work' went 80 ms without a cancellation check \(cancelWithinMs 50\)/);
    expect(lines[1]).toMatch(/^tool 'plain' stage 'crunch' went 150 ms/);
    clock.now = WARN_EVERY_MS - 1;
    gaps.record(fast, 60, 0);
    expect(lines).toHaveLength(2);
    clock.now = WARN_EVERY_MS;
    gaps.record(fast, 200, 0);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(
      /^tool 'fast' stage 'parse' went 200 ms .*\(and 2 more calls over budget since the last warning\)/,
    );
    clock.now = 3 * WARN_EVERY_MS;
    gaps.record(fast, 51, 0);
    expect(lines[3]).not.toMatch(/more calls/);
    expect(gaps.snapshot().fast).toMatchObject({ calls: 6, overBudget: 5, worstMs: 200, worstStage: 'parse' });
  });
});

describe('gap words', () => {
  it('the worker writes a slot’s gap and stage beside the clock word; without a buffer writes are dropped', () => {
    const buffer = new SharedArrayBuffer((1 + 2 * 4) * 4);
    const view = gapWords(buffer);
    expect(view.capacity).toBe(4);
    writeGap(view, 2, 123, 1);
    const words = new Int32Array(buffer);
    expect([words[0], words[1 + 2], words[1 + 4 + 2]]).toEqual([0, 123, 1]);
    const none = gapWords(undefined);
    expect(none.capacity).toBe(0);
    writeGap(none, 2, 123, 1);
    expect([...none.words]).toEqual([0]);
  });
});
