/** Probing one server in one era: every case in turn, over one connection, then every rule's verdict. */
import { messagesAfterCancel } from './after-cancel.js';
import type { Http2025Transport } from './http-2025.js';
import type { Http2026Transport } from './http-2026.js';
import { cancelledCall } from './cancelled-call.js';
import { canMeasureCpu } from './cpu.js';
import { closedStreamVerdict, droppedStream, type DroppedStream } from './rules/closed-stream.js';
import { noAnswerVerdicts } from './rules/no-answer.js';
import { noFurtherMessagesVerdict } from './rules/no-further-messages.js';
import { postCancelCase } from './rules/post-cancel.js';
import { raceCase, raceVerdict } from './rules/race.js';
import { afterAllCase, whileRunningVerdict } from './rules/responsive.js';
import { silentNotificationCases } from './rules/silent-notifications.js';
import { tasksCase } from './rules/tasks.js';
import { workStopsVerdict } from './rules/work-stops.js';
import { IDLE_PINGS, summariesOf } from './summaries.js';
import { connect, targetLabel } from './targets.js';
import type { CancelSample, Era, ProbeOptions, TargetResult, TargetSpec, UncancelledCall, Verdict } from './types.js';
import { uncancelledCall } from './uncancelled-call.js';

/** Where the probe reports how far it got (a progress bar). */
export interface ProbeProgress {
  phase(name: string): void;
  tick(): void;
}

/** Steps {@link probeTarget} reports through `tick` for one era, for a progress bar's total. */
export function probeSteps(spec: TargetSpec, options: ProbeOptions): number {
  return (
    IDLE_PINGS +
    options.samples +
    1 +
    (options.quickTool !== undefined ? options.storm : 0) +
    2 +
    (spec.kind === 'http' ? 1 : 0)
  );
}

export async function probeTarget(
  spec: TargetSpec,
  options: ProbeOptions,
  progress: ProbeProgress,
  era: Era = '2025',
): Promise<TargetResult & { dropped?: DroppedStream }> {
  const label = targetLabel(spec);
  progress.phase(`${label} (${era}): connecting`);
  const conn = await connect(spec, era, options.connectTimeoutMs, options.timeoutMs);
  const { wire } = conn;
  const base = {
    label,
    target: spec,
    era,
    ...(conn.serverInfo && { serverInfo: conn.serverInfo }),
    ...(conn.protocolVersion && { protocolVersion: conn.protocolVersion }),
  };
  const verdicts: Verdict[] = [];
  const samples: CancelSample[] = [];
  const idlePingMs: number[] = [];
  try {
    const tools = await conn.listTools();
    for (const name of [options.tool, options.quickTool, options.taskTool]) {
      if (name !== undefined && !tools.includes(name))
        throw new Error(`the server has no tool '${name}' (it lists: ${tools.join(', ')})`);
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
      uncancelled = await uncancelledCall(wire, conn.pid, options);
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
      dropped = await droppedStream(wire, conn.transport as Http2025Transport, spec.url, conn.pid, options);
      progress.tick();
    }
    let postCancel: Verdict | undefined;
    if (spec.kind === 'http' && era === '2026') {
      progress.phase(`${label} (${era}): notifications/cancelled by POST`);
      postCancel = await postCancelCase(wire, conn.transport as Http2026Transport, spec.url, options);
      progress.tick();
    }
    // Last: anything that answered a cancelled call late, and a server still serving.
    for (const s of samples) {
      s.answersAfterCancelMs = wire
        .answersFor(s.requestId)
        .filter((a) => a.at >= s.cancelAt)
        .map((a) => a.at - s.cancelAt);
      s.afterCancel = messagesAfterCancel(wire, s);
    }
    const after = await afterAllCase(wire, options, conn.lost, era);
    progress.tick();
    const workStops = workStopsVerdict(samples, options, cpuMeasured, uncancelled);
    verdicts.push(...noAnswerVerdicts(samples, options, spec, era));
    if (!verdicts.some((v) => v.rule === 'cancel.setup')) {
      verdicts.push(
        workStops,
        noFurtherMessagesVerdict(samples, era, options.markers),
        whileRunningVerdict(samples, options, era),
      );
    }
    verdicts.push(...silent, raceVerdict(races, options), ...tasks);
    if (dropped) verdicts.push(dropped.verdict);
    if (spec.kind === 'http' && era === '2026') verdicts.push(closedStreamVerdict(workStops));
    if (postCancel) verdicts.push(postCancel);
    verdicts.push(after);
    return {
      ...base,
      verdicts,
      samples,
      races,
      idlePingMs,
      summaries: summariesOf(samples, idlePingMs, options),
      ...(uncancelled && { uncancelled }),
      ...(dropped && { dropped }),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const tail = conn.stderrTail().trim();
    return {
      ...base,
      verdicts,
      samples,
      races: [],
      idlePingMs,
      summaries: summariesOf(samples, idlePingMs, options),
      error: message + (tail ? `\nserver stderr ended with:\n${tail}` : ''),
    };
  } finally {
    progress.phase(`${label} (${era}): closing`);
    await conn.close();
  }
}
