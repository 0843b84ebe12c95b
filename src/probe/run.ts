/** Probing one server in one era: every case in turn, over one connection, then every rule's verdict. */
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { messagesAfterCancel } from './after-cancel.js';
import { cancelledCall } from './cancelled-call.js';
import { canMeasureCpu } from './cpu.js';
import { closedStreamVerdict, droppedStream, type DroppedStream } from './rules/closed-stream.js';
import { noAnswerVerdicts } from './rules/no-answer.js';
import { noFurtherMessagesVerdict } from './rules/no-further-messages.js';
import { raceCase, raceVerdict } from './rules/race.js';
import { afterAllCase, whileRunningVerdict } from './rules/responsive.js';
import { silentNotificationCases } from './rules/silent-notifications.js';
import { tasksCase } from './rules/tasks.js';
import { workStopsVerdict } from './rules/work-stops.js';
import { summarize } from './stats.js';
import { connect, targetLabel } from './targets.js';
import type { CancelSample, Era, Measure, ProbeOptions, TargetResult, TargetSpec, UncancelledCall, Verdict } from './types.js';
import { uncancelledCall } from './uncancelled-call.js';

const IDLE_PINGS = 10;

/** Where the probe reports how far it got (a progress bar). */
export interface ProbeProgress {
  phase(name: string): void;
  tick(): void;
}

/** Steps {@link probeTarget} reports through `tick` for one era, for a progress bar's total. */
export function probeSteps(spec: TargetSpec, options: ProbeOptions): number {
  return IDLE_PINGS + options.samples + 1 + (options.quickTool !== undefined ? options.storm : 0) + 2 + (spec.kind === 'http' ? 1 : 0);
}

export async function probeTarget(spec: TargetSpec, options: ProbeOptions, progress: ProbeProgress, era: Era = '2025'): Promise<TargetResult & { dropped?: DroppedStream }> {
  const label = targetLabel(spec);
  progress.phase(`${label} (${era}): connecting`);
  const conn = await connect(spec, era, options.connectTimeoutMs, options.timeoutMs);
  const { wire } = conn;
  const base = { label, target: spec, era, ...(conn.serverInfo && { serverInfo: conn.serverInfo }), ...(conn.protocolVersion && { protocolVersion: conn.protocolVersion }) };
  const verdicts: Verdict[] = [];
  const samples: CancelSample[] = [];
  const idlePingMs: number[] = [];
  try {
    const tools = await conn.listTools();
    for (const name of [options.tool, options.quickTool, options.taskTool]) {
      if (name !== undefined && !tools.includes(name)) throw new Error(`the server has no tool '${name}' (it lists: ${tools.join(', ')})`);
    }
    progress.phase(`${label} (${era}): idle round trips`);
    for (let i = 0; i < IDLE_PINGS; i++) {
      const rtt = await wire.ping(options.timeoutMs);
      if (rtt !== undefined) idlePingMs.push(rtt);
      progress.tick();
    }
    progress.phase(`${label} (${era}): cancelling ${options.tool}`);
    for (let i = 0; i < options.samples; i++) {
      samples.push(await cancelledCall({ wire, pid: conn.pid, options }));
      progress.tick();
    }
    // Whether CPU could show the work going on at all: one call of the tool left to run (the samples' windows are over).
    const cpuMeasured = conn.pid !== undefined && canMeasureCpu(conn.pid);
    let uncancelled: UncancelledCall | undefined;
    if (cpuMeasured) {
      progress.phase(`${label} (${era}): ${options.tool} uncancelled`);
      uncancelled = await uncancelledCall(wire, conn.pid!, options);
    }
    progress.tick();
    progress.phase(`${label} (${era}): notifications`);
    const silent = await silentNotificationCases(wire, options);
    progress.tick();
    progress.phase(`${label} (${era}): race storm`);
    const races = await raceCase(wire, options, () => progress.tick());
    if (options.taskTool !== undefined) progress.phase(`${label} (${era}): tasks`);
    const tasks = await tasksCase(wire, options, era, conn.pid);
    let dropped: DroppedStream | undefined;
    if (spec.kind === 'http' && era === '2025') {
      progress.phase(`${label} (${era}): dropped stream`);
      dropped = await droppedStream(wire, conn.transport as StreamableHTTPClientTransport, spec.url, conn.pid, options);
      progress.tick();
    }
    // Last: anything that answered a cancelled call late, and a server still serving.
    for (const s of samples) {
      s.answersAfterCancelMs = wire.answersFor(s.requestId).filter((a) => a.at >= s.cancelAt).map((a) => a.at - s.cancelAt);
      s.afterCancel = messagesAfterCancel(wire, s);
    }
    const after = await afterAllCase(wire, options, conn.lost, era);
    progress.tick();
    const workStops = workStopsVerdict(samples, options, cpuMeasured, uncancelled);
    verdicts.push(...noAnswerVerdicts(samples, options, spec, era));
    if (!verdicts.some((v) => v.rule === 'cancel.setup')) {
      verdicts.push(workStops, noFurtherMessagesVerdict(samples, era, options.markers), whileRunningVerdict(samples, options, era));
    }
    verdicts.push(...silent, raceVerdict(races, options), ...tasks);
    if (dropped) verdicts.push(dropped.verdict);
    if (spec.kind === 'http' && era === '2026') verdicts.push(closedStreamVerdict(workStops));
    verdicts.push(after);
    return { ...base, verdicts, samples, races, idlePingMs, summaries: summariesOf(samples, idlePingMs, options), ...(uncancelled && { uncancelled }), ...(dropped && { dropped }) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const tail = conn.stderrTail().trim();
    return { ...base, verdicts, samples, races: [], idlePingMs, summaries: summariesOf(samples, idlePingMs, options), error: message + (tail ? `\nserver stderr ended with:\n${tail}` : '') };
  } finally {
    progress.phase(`${label} (${era}): closing`);
    await conn.close();
  }
}

/**
 * The statistics of the report. Each over the cancelled calls says how many
 * were taken and, when fewer values went in, why: a call that ended before
 * its cancel is not a sample; a quick call unanswered has no latency; a
 * process still busy at the end of the window never fell idle.
 */
function summariesOf(samples: readonly CancelSample[], idlePingMs: readonly number[], options: ProbeOptions): Record<string, Measure> {
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const early = samples.length - valid.length;
  const over = (values: (number | undefined)[], missing: (count: number) => string | undefined): Measure => {
    const defined = values.filter((x): x is number => x !== undefined && Number.isFinite(x));
    const reasons = [early ? `${early} call(s) ended before their cancel (not samples)` : undefined, defined.length < valid.length ? missing(valid.length - defined.length) : undefined].filter(Boolean);
    return { ...summarize(defined), taken: samples.length, ...(reasons.length && { why: reasons.join('; ') }) };
  };
  const stillBusy = valid.filter((s) => s.idleAfterCancelMs === Number.POSITIVE_INFINITY).length;
  return {
    'cancel → next call answered': over(valid.map((s) => s.nextCallMs), (k) => (options.quickTool === undefined ? 'no --quick-tool' : `${k} quick call(s) unanswered within ${Math.max(options.settleMs, options.timeoutMs)} ms of the cancel`)),
    'ping while the long tool runs': summarize(valid.flatMap((s) => s.pingWhileRunningMs)),
    'ping, idle': { ...summarize(idlePingMs), taken: IDLE_PINGS, ...(idlePingMs.length < IDLE_PINGS && { why: `${IDLE_PINGS - idlePingMs.length} unanswered within ${options.timeoutMs} ms` }) },
    'CPU after cancel': over(valid.map((s) => s.cpuAfterCancelMs), (k) => (k === valid.length ? 'CPU not measurable (an HTTP server without --pid, or no /proc)' : `${k}: the server exited during the window`)),
    'cancel → idle': over(valid.map((s) => s.idleAfterCancelMs), (k) =>
      k === stillBusy ? `${k} still busy at the end of the ${options.settleMs} ms window (never fell idle)` : `${stillBusy} still busy at the end of the ${options.settleMs} ms window; ${k - stillBusy} not measured (no CPU readings)`,
    ),
  };
}
