/**
 * `mcp-cancel-pool check-tools <module>`: a tool author's check of each
 * tool's cancel responsiveness, for their CI. Per tool: one run to
 * completion (cancelled at `--max-run-ms` if it runs longer), then one cancel
 * at 10, 50 and 90 % of that run's time; the worst checkpoint gap the worker
 * measured (src/state/gap-clock.ts), cancel → stopped (the worker back and
 * its slot free), hard stops, and child processes still alive after a
 * cancel where the pool counts them (`childrenAlive` in its stats). Exit 0
 * when every tool stayed within its `cancelWithinMs`, needed no hard stop and
 * left nothing behind, 1 otherwise, naming each tool and why.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { setTimeout as delay } from 'node:timers/promises';
import { Executor } from '../executor/executor.js';
import { JOB_EVENTS, type JobEvent } from '../executor/events.js';
import { DEFAULT_CANCEL_WITHIN_MS, type ToolDefinition } from '../stages/tool.js';
import { quantile } from '../probe/stats.js';
import { checkToolModule } from './tool-modules.js';
import { UsageError } from './usage-error.js';
import { DEFAULTS } from '../defaults.js';

/** Where in the measured run each cancel is sent. */
export const CANCEL_AT = [0.1, 0.5, 0.9] as const;

/** One tool's verdict. */
export interface ToolCheck {
  readonly tool: string;
  readonly cancelWithinMs: number;
  /** The completed run's time (ms), or undefined when it did not complete. */
  readonly runMs?: number;
  /** The worst checkpoint gap (ms) of every run, and its stage. */
  readonly worstGapMs: number;
  readonly worstGapStage?: string;
  /** Cancel → stopped (ms) of each cancel that won. */
  readonly cancelToStoppedMs: { readonly p50: number; readonly p99: number; readonly max: number } | undefined;
  readonly hardStops: number;
  /** Cancels that arrived after the run had finished (nothing to stop). */
  readonly cancelsTooLate: number;
  /** The measured run was stopped at `--max-run-ms`; the cancels were placed in that much of it. */
  readonly runCapped: boolean;
  /**
   * Child processes of the tool still alive a second past the grace after a
   * cancel; undefined where the pool does not count children.
   */
  readonly childrenOutlived?: number;
  /**
   * Synchronous spawns its runs made (`execSync`, `execFileSync`, `spawnSync`): each blocks the worker thread
   * until its program ends, out of reach of any cancel. Reported, not failed: a short one costs a short gap,
   * which the gap measure judges.
   */
  readonly syncSpawns: number;
  readonly ok: boolean;
  /** Why it failed (empty when ok). */
  readonly reasons: readonly string[];
}

interface CheckFlags {
  readonly args?: string;
  readonly maxRunMs: string;
  readonly json?: boolean;
}

/** Adds the command to the CLI. */
export function registerCheckTools(program: Command): void {
  program
    .command('check-tools')
    .argument('<module>', 'the tools module (.ts or .js), as serve --tools takes it')
    .option('--args <file.json>', 'a JSON object mapping tool name → arguments (else each tool’s own `examples`)')
    .option('--max-run-ms <n>', 'cap on the measured run a cancel is placed in', '10000')
    .option('--json', 'print the report as JSON')
    .description(
      'Run each tool once, then cancel it at 10/50/90 % of that run: report its worst checkpoint gap, cancel → stopped and hard stops; exit 1 naming each tool over its cancelWithinMs or hard-stopped.',
    )
    .action(async (module: string, flags: CheckFlags) => {
      const checks = await checkTools(module, flags);
      const failed = checks.filter((c) => !c.ok);
      if (flags.json) process.stdout.write(JSON.stringify({ ok: failed.length === 0, tools: checks }, null, 2) + '\n');
      else process.stdout.write(table(checks));
      for (const c of checks.filter((c) => c.syncSpawns > 0))
        process.stderr.write(
          `[mcp-cancel-pool] check-tools: ${c.tool} made ${c.syncSpawns} synchronous spawn(s) (execSync, execFileSync or spawnSync): no cancel reaches one until its program ends; use ctx.spawn or the asynchronous forms\n`,
        );
      for (const c of failed)
        process.stderr.write(`[mcp-cancel-pool] check-tools: ${c.tool} FAILED: ${c.reasons.join('; ')}\n`);
      process.exitCode = failed.length === 0 ? 0 : 1;
    });
}

/** Runs the check (see the module comment). */
export async function checkTools(module: string, flags: CheckFlags): Promise<ToolCheck[]> {
  const file = resolve(module);
  await checkToolModule(file);
  const maxRunMs = Number(flags.maxRunMs);
  if (!Number.isFinite(maxRunMs) || maxRunMs <= 0)
    throw new UsageError(`--max-run-ms ${flags.maxRunMs}: expected a positive number of milliseconds`);
  const argsByTool = flags.args ? readArgs(flags.args) : {};
  const executor = await Executor.create({
    toolModules: [pathToFileURL(file)],
    builtins: false,
    threads: 1,
    spareThreads: 0,
  });
  const gaps = new Map<object, { ms: number; stage: string }>();
  const onEvent = (message: unknown) => {
    const e = message as JobEvent;
    if (e.type === 'settled' && e.checkpointGap) gaps.set(e.job, e.checkpointGap);
  };
  JOB_EVENTS.subscribe(onEvent);
  try {
    const out: ToolCheck[] = [];
    for (const tool of executor.tools.values())
      out.push(await checkOne(executor, tool, argsByTool[tool.name], maxRunMs, gaps));
    return out;
  } finally {
    JOB_EVENTS.unsubscribe(onEvent);
    await executor.close();
  }
}

function readArgs(path: string): Record<string, Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`--args ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(parsed) || !Object.values(parsed).every(isObject))
    throw new UsageError(`--args ${path}: expected a JSON object mapping tool name → arguments (an object)`);
  return parsed as Record<string, Record<string, unknown>>;
}

let nextId = 1;

async function checkOne(
  executor: Executor,
  tool: ToolDefinition,
  given: Record<string, unknown> | undefined,
  maxRunMs: number,
  gaps: Map<object, { ms: number; stage: string }>,
): Promise<ToolCheck> {
  const cancelWithinMs = tool.cancelWithinMs ?? DEFAULT_CANCEL_WITHIN_MS;
  const args = given ?? tool.examples?.find((example) => tool.input.safeParse(example).success);
  const syncBefore = executor.stats().childrenSync;
  const base = {
    syncSpawns: 0,
    tool: tool.name,
    cancelWithinMs,
    worstGapMs: 0,
    cancelToStoppedMs: undefined,
    hardStops: 0,
    cancelsTooLate: 0,
    runCapped: false,
  };
  if (args === undefined)
    return { ...base, ok: false, reasons: ['no arguments: give them in --args, or an `examples` entry in defineTool'] };
  let worst = { ms: 0, stage: undefined as string | undefined };
  const seen = (job: object) => {
    const g = gaps.get(job);
    gaps.delete(job);
    if (g && g.ms >= worst.ms) worst = { ms: g.ms, stage: g.stage };
  };
  const t0 = performance.now();
  const firstId = `run-${nextId++}`;
  const first = executor.submit('check-tools', firstId, { tool: tool.name, args });
  const cap = new AbortController();
  const capped = await Promise.race([
    first.outcome.then(() => false),
    delay(maxRunMs, true, { signal: cap.signal }).catch(() => false),
  ]);
  cap.abort(); // the cap's timer would keep the process up to --max-run-ms after the last tool
  if (capped) executor.tryCancel('check-tools', firstId);
  const outcome = await first.outcome;
  const runMs = capped ? maxRunMs : performance.now() - t0;
  seen(first);
  if (outcome.kind !== 'completed' && !(capped && outcome.kind === 'cancelled'))
    return {
      ...base,
      worstGapMs: worst.ms,
      ok: false,
      reasons: [`its run did not complete (${outcome.kind}${'message' in outcome ? `: ${outcome.message}` : ''})`],
    };
  const stops: number[] = [];
  let hardStops = capped && outcome.kind === 'cancelled' && outcome.hardKilled ? 1 : 0;
  let tooLate = 0;
  let outlived: number | undefined = await childrenLeft(executor);
  for (const at of CANCEL_AT) {
    const id = `cancel-${nextId++}`;
    const job = executor.submit('check-tools', id, { tool: tool.name, args });
    await running(job);
    await delay(runMs * at);
    const cancelledAt = performance.now();
    const decided = executor.tryCancel('check-tools', id);
    const o = await job.outcome;
    seen(job);
    if (decided !== 'cancelled-running' && decided !== 'cancelled-queued') {
      tooLate++;
      continue;
    }
    stops.push(performance.now() - cancelledAt);
    if ((o.kind === 'cancelled' || o.kind === 'timedOut') && o.hardKilled) hardStops++;
    const left = await childrenLeft(executor);
    if (left !== undefined) outlived = Math.max(outlived ?? 0, left);
  }
  const reasons: string[] = [];
  if (worst.ms > cancelWithinMs)
    reasons.push(
      `went ${worst.ms} ms without a cancellation check in stage '${worst.stage}' (cancelWithinMs ${cancelWithinMs})`,
    );
  if (hardStops > 0)
    reasons.push(
      `${hardStops} of ${stops.length + (capped ? 1 : 0)} cancels needed the hard stop (the worker thread terminated)`,
    );
  if (outlived !== undefined && outlived > 0)
    reasons.push(`${outlived} child process(es) still alive ${DEFAULTS.graceMs + 1000} ms after a cancel`);
  const sorted = [...stops].sort((a, b) => a - b);
  return {
    ...base,
    runMs,
    worstGapMs: worst.ms,
    ...(worst.stage !== undefined && { worstGapStage: worst.stage }),
    cancelToStoppedMs:
      sorted.length > 0
        ? { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1]! }
        : undefined,
    hardStops,
    cancelsTooLate: tooLate,
    runCapped: capped,
    ...(outlived !== undefined && { childrenOutlived: outlived }),
    syncSpawns: executor.stats().childrenSync - syncBefore,
    ok: reasons.length === 0,
    reasons,
  };
}

/**
 * Child processes still alive once the pool had the grace and a second more
 * to end them, where it counts them (`childrenAlive` in its stats, from
 * `ctx.spawn` and the worker's watch of `node:child_process`); undefined where
 * it does not.
 */
async function childrenLeft(executor: Executor): Promise<number | undefined> {
  const alive = () => (executor.stats() as { childrenAlive?: number }).childrenAlive;
  if (alive() === undefined) return undefined;
  const until = performance.now() + DEFAULTS.graceMs + 1000;
  while (alive()! > 0 && performance.now() < until) await delay(10);
  return alive();
}

/** Resolves once the job is on a worker thread. */
async function running(job: { readonly state: string }): Promise<void> {
  while (job.state === 'queued') await delay(1);
}

function table(checks: readonly ToolCheck[]): string {
  const ms = (n: number | undefined) => (n === undefined ? '-' : `${n.toFixed(1)}`);
  const lines = [
    'tool\tbudget ms\trun ms\tworst gap ms (stage)\tcancel→stopped p50/p99/max ms\thard stops\tchildren left\tsync spawns\tverdict',
  ];
  for (const c of checks)
    lines.push(
      [
        c.tool,
        c.cancelWithinMs,
        ms(c.runMs),
        `${c.worstGapMs}${c.worstGapStage ? ` (${c.worstGapStage})` : ''}`,
        c.cancelToStoppedMs
          ? `${ms(c.cancelToStoppedMs.p50)}/${ms(c.cancelToStoppedMs.p99)}/${ms(c.cancelToStoppedMs.max)}`
          : '-',
        c.hardStops,
        c.childrenOutlived ?? '-',
        c.syncSpawns,
        c.ok ? 'ok' : 'FAILED',
      ].join('\t'),
    );
  return lines.join('\n') + '\n';
}
