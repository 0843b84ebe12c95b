/**
 * The main thread's record of each tool's checkpoint gaps (measured in the
 * worker, src/state/gap-clock.ts): per tool, calls measured, calls over the
 * tool's `cancelWithinMs`, the worst gap and its stage, for `executor://stats`;
 * and the warning line for a call over budget, at most one per tool per
 * {@link WARN_EVERY_MS} (the next one says how many it stands for).
 */
import type { ToolGapStats } from '../backend/backend.js';
import { DEFAULT_CANCEL_WITHIN_MS, stageName, type ToolDefinition } from '../stages/tool.js';

/** At most one warning per tool in this long. */
export const WARN_EVERY_MS = 60_000;

/** One call's measured gap, as the job reports it. */
export interface MeasuredGap {
  readonly ms: number;
  readonly stage: string;
  readonly budgetMs: number;
}

interface ToolRecord extends ToolGapStats {
  warnedAt: number;
  unwarned: number;
}

/** Where a warning line goes (process.emitWarning unless told otherwise). */
export type GapWarn = (message: string) => void;

const emit: GapWarn = (message) => process.emitWarning(message, { code: 'MCP_CANCEL_POOL_CHECKPOINT_GAP' });

/** Per-tool checkpoint-gap statistics; see the module comment. */
export class CheckpointGaps {
  private readonly byTool = new Map<string, ToolRecord>();

  constructor(
    private readonly warn: GapWarn = emit,
    /** The clock the rate limit reads (ms); a unit test hands its own. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Records one call's worst gap (`stageIndex` as the worker wrote it) and returns it with its stage's name. */
  record(tool: ToolDefinition, ms: number, stageIndex: number): MeasuredGap {
    const budgetMs = tool.cancelWithinMs ?? DEFAULT_CANCEL_WITHIN_MS;
    const s = tool.stages[stageIndex];
    const stage = s ? stageName(s, stageIndex) : 'result';
    let r = this.byTool.get(tool.name);
    if (!r) {
      r = {
        cancelWithinMs: budgetMs,
        calls: 0,
        overBudget: 0,
        worstMs: 0,
        worstStage: stage,
        lastMs: 0,
        warnedAt: Number.NEGATIVE_INFINITY,
        unwarned: 0,
      };
      this.byTool.set(tool.name, r);
    }
    r.calls++;
    r.lastMs = ms;
    if (ms > r.worstMs) {
      r.worstMs = ms;
      r.worstStage = stage;
    }
    if (ms > budgetMs) {
      r.overBudget++;
      const now = this.now();
      if (now - r.warnedAt >= WARN_EVERY_MS) {
        const more = r.unwarned > 0 ? ` (and ${r.unwarned} more calls over budget since the last warning)` : '';
        r.warnedAt = now;
        r.unwarned = 0;
        this.warn(
          `tool '${tool.name}' stage '${stage}' went ${ms} ms without a cancellation check (cancelWithinMs ${budgetMs})${more}; a cancel waits that long: call ctx.checkpoint() more often`,
        );
      } else r.unwarned++;
    }
    return { ms, stage, budgetMs };
  }

  /** A snapshot for `executor://stats`. */
  snapshot(): Record<string, ToolGapStats> {
    const out: Record<string, ToolGapStats> = {};
    for (const [name, r] of this.byTool)
      out[name] = {
        cancelWithinMs: r.cancelWithinMs,
        calls: r.calls,
        overBudget: r.overBudget,
        worstMs: r.worstMs,
        worstStage: r.worstStage,
        lastMs: r.lastMs,
      };
    return out;
  }
}
