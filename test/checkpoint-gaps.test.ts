/**
 * The checkpoint-gap measurement over the real pool: each call's longest time
 * without a cancellation check, per tool in `stats().checkpointGaps`, judged
 * against the tool's `cancelWithinMs`. Burn times are far from the budgets,
 * so the verdicts hold on a loaded machine.
 */
import { describe, expect, it } from 'vitest';
import { closeExecutorsAfterEach, freshId, make, within } from './executor-helpers.js';
import type { Executor } from '../dist/src/index.js';
import { Metrics, subscribeJobMetrics } from '../dist/src/entries/ops.js';

closeExecutorsAfterEach();
const GAP_TOOLS = new URL('../dist-dev/test/fixtures/gap-tools.js', import.meta.url);

async function call(ex: Executor, tool: string, args: Record<string, unknown>) {
  const outcome = await within(ex.submit('gaps', freshId(), { tool, args }).outcome, 30_000, tool);
  expect(outcome.kind).toBe('completed');
}

describe('checkpoint gaps', () => {
  it('a tool that checks every millisecond stays within its budget; one that checks only at its end does not', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === 'MCP_CANCEL_POOL_CHECKPOINT_GAP') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const ex = await make({ toolModules: [GAP_TOOLS], builtins: false, threads: 1 });
      const metrics = new Metrics('worker', () => ({}), { processMetrics: false });
      const unsubscribe = subscribeJobMetrics(metrics, {
        tools: new Set(ex.tools.keys()),
        countCalls: true,
        countCancels: false,
      });
      await call(ex, 'checks_every_ms', { ms: 300 });
      await call(ex, 'checks_at_end', { ms: 600 });
      await call(ex, 'checks_at_end', { ms: 600 });
      const gaps = ex.stats().checkpointGaps!;
      expect(gaps.checks_every_ms).toMatchObject({ calls: 1, overBudget: 0, cancelWithinMs: 250 });
      expect(gaps.checks_every_ms!.worstMs).toBeLessThan(250);
      expect(gaps.checks_at_end).toMatchObject({ calls: 2, overBudget: 2, cancelWithinMs: 100, worstStage: 'work' });
      // Over its budget; not "about 600 ms": the time its thread waited for a core is not a gap, and on a busy
      // machine that is much of a 600 ms burn.
      expect(gaps.checks_at_end!.worstMs).toBeGreaterThan(100);
      // Rate-limited per tool: two calls over budget, one line, naming tool, stage and gap.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/tool 'checks_at_end' stage 'work' went \d+ ms without a cancellation check/);
      // The histogram: one observation per measured call, by tool; the slow tool's two above 0.5 s.
      const text = await metrics.text();
      unsubscribe();
      expect(text).toMatch(/^mcp_cancel_pool_checkpoint_gap_seconds_count\{[^}]*tool="checks_at_end"[^}]*\} 2$/m);
      expect(text).toMatch(/^mcp_cancel_pool_checkpoint_gap_seconds_count\{[^}]*tool="checks_every_ms"[^}]*\} 1$/m);
      expect(text).toMatch(
        /^mcp_cancel_pool_checkpoint_gap_seconds_bucket\{(?=[^}]*le="0.25")(?=[^}]*tool="checks_at_end")[^}]*\} 0$/m,
      );
    } finally {
      process.off('warning', onWarning);
    }
  }, 60_000);

  it('reads of ctx.stopped, stage boundaries and ctx.spawn’s whole wait count as checks; a stage’s own await does not', async () => {
    const ex = await make({ toolModules: [GAP_TOOLS], builtins: false, threads: 1 });
    await call(ex, 'reads_stopped', { ms: 300 });
    await call(ex, 'async_gap', { ms: 400 });
    await call(ex, 'spawn_wait', { ms: 2000 });
    const gaps = ex.stats().checkpointGaps!;
    expect(gaps.reads_stopped).toMatchObject({ calls: 1, overBudget: 0 });
    expect(gaps.async_gap).toMatchObject({ calls: 1, overBudget: 1, worstStage: 'wait' });
    // A stop would have ended the program at once: the 2 s it waited are no gap (an idle wait is no wait for a core).
    expect(gaps.spawn_wait).toMatchObject({ calls: 1 });
    expect(gaps.spawn_wait!.worstMs).toBeLessThan(2000);
  }, 60_000);

  it('checkpointGaps: false measures nothing', async () => {
    const ex = await make({ toolModules: [GAP_TOOLS], builtins: false, threads: 1, checkpointGaps: false });
    await call(ex, 'checks_at_end', { ms: 200 });
    expect(ex.stats().checkpointGaps).toBeUndefined();
  }, 60_000);
});
