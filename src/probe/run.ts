/** Probing one server in one era: every case in turn, over one connection, then every rule's verdict. */
import type { Http2025Transport } from './http-2025.js';
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
import type { CancelSample, Era, ProbeOptions, TargetResult, TargetSpec, Verdict } from './types.js';

const IDLE_PINGS = 10;

/** Where the probe reports how far it got (a progress bar). */
export interface ProbeProgress {
  phase(name: string): void;
  tick(): void;
}

/** Steps {@link probeTarget} reports through `tick` for one era, for a progress bar's total. */
export function probeSteps(spec: TargetSpec, options: ProbeOptions): number {
  return IDLE_PINGS + options.samples + (options.quickTool !== undefined ? options.storm : 0) + 2 + (spec.kind === 'http' ? 1 : 0);
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
      dropped = await droppedStream(wire, conn.transport as Http2025Transport, spec.url, conn.pid, options);
      progress.tick();
    }
    // Last: anything that answered a cancelled call late, and a server still serving.
    for (const s of samples) s.answersAfterCancelMs = wire.answersFor(s.requestId).filter((a) => a.at >= s.cancelAt).map((a) => a.at - s.cancelAt);
    const after = await afterAllCase(wire, options, conn.lost, era);
    progress.tick();
    const cpuMeasured = conn.pid !== undefined && canMeasureCpu(conn.pid);
    const workStops = workStopsVerdict(samples, options, cpuMeasured);
    verdicts.push(...noAnswerVerdicts(samples, options, spec, era));
    if (!verdicts.some((v) => v.rule === 'cancel.setup')) {
      verdicts.push(workStops, noFurtherMessagesVerdict(samples, era, options.markers), whileRunningVerdict(samples, options, era));
    }
    verdicts.push(...silent, raceVerdict(races, options), ...tasks);
    if (dropped) verdicts.push(dropped.verdict);
    if (spec.kind === 'http' && era === '2026') verdicts.push(closedStreamVerdict(workStops));
    verdicts.push(after);
    return { ...base, verdicts, samples, races, idlePingMs, summaries: summariesOf(samples, idlePingMs), ...(dropped && { dropped }) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const tail = conn.stderrTail().trim();
    return { ...base, verdicts, samples, races: [], idlePingMs, summaries: summariesOf(samples, idlePingMs), error: message + (tail ? `\nserver stderr ended with:\n${tail}` : '') };
  } finally {
    progress.phase(`${label} (${era}): closing`);
    await conn.close();
  }
}

function summariesOf(samples: readonly CancelSample[], idlePingMs: readonly number[]) {
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  return {
    'cancel → next call answered': summarize(defined(valid.map((s) => s.nextCallMs))),
    'ping while the long tool runs': summarize(valid.flatMap((s) => s.pingWhileRunningMs)),
    'ping, idle': summarize(idlePingMs),
    'CPU after cancel': summarize(defined(valid.map((s) => s.cpuAfterCancelMs))),
    'cancel → idle': summarize(defined(valid.map((s) => s.idleAfterCancelMs))),
  };
}
