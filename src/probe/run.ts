/** Probing one server: every case in turn, over one connection. */
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { quantile, summarize } from './stats.js';
import { cancelSample } from './cancel-samples.js';
import { canMeasureCpu } from './cpu.js';
import { droppedStream, type DroppedStream } from './http-cases.js';
import { notificationCases } from './notify-cases.js';
import { raceStorm } from './storm.js';
import { connect, targetLabel } from './targets.js';
import type { CancelSample, ProbeOptions, TargetResult, TargetSpec, Verdict } from './types.js';
import { raceVerdict, sampleVerdicts } from './verdicts.js';

const IDLE_PINGS = 10;

/** Where the probe reports how far it got (a progress bar). */
export interface ProbeProgress {
  phase(name: string): void;
  tick(): void;
}

/** Steps {@link probeTarget} reports through `tick`, for a progress bar's total. */
export function probeSteps(spec: TargetSpec, options: ProbeOptions): number {
  return IDLE_PINGS + options.samples + (options.quickTool !== undefined ? options.storm : 0) + 2 + (spec.kind === 'http' ? 1 : 0);
}

export async function probeTarget(spec: TargetSpec, options: ProbeOptions, progress: ProbeProgress): Promise<TargetResult & { dropped?: DroppedStream }> {
  const label = targetLabel(spec);
  progress.phase(`${label}: connecting`);
  const conn = await connect(spec, options.timeoutMs);
  const { wire } = conn;
  const version = conn.client.getServerVersion();
  const base = {
    label,
    target: spec,
    ...(version && { serverInfo: { name: version.name, version: version.version } }),
  };
  const initResult = wire.log.find((e) => e.dir === 'in' && (e.msg.result as { protocolVersion?: string } | undefined)?.protocolVersion)?.msg.result as { protocolVersion: string } | undefined;
  const withVersion = { ...base, ...(initResult && { protocolVersion: initResult.protocolVersion }) };
  const verdicts: Verdict[] = [];
  const samples: CancelSample[] = [];
  const idlePingMs: number[] = [];
  try {
    const tools = await conn.client.listTools(undefined, { timeout: options.timeoutMs });
    for (const name of [options.tool, options.quickTool]) {
      if (name !== undefined && !tools.tools.some((t) => t.name === name)) throw new Error(`the server has no tool '${name}' (it lists: ${tools.tools.map((t) => t.name).join(', ')})`);
    }
    progress.phase(`${label}: idle pings`);
    for (let i = 0; i < IDLE_PINGS; i++) {
      const rtt = await wire.ping(options.timeoutMs);
      if (rtt !== undefined) idlePingMs.push(rtt);
      progress.tick();
    }
    progress.phase(`${label}: cancelling ${options.tool}`);
    for (let i = 0; i < options.samples; i++) {
      const idleRttMs = quantile([...idlePingMs].sort((a, b) => a - b), 0.9) || 0;
      samples.push(await cancelSample({ wire, pid: conn.pid, options, idleRttMs }));
      progress.tick();
    }
    progress.phase(`${label}: notifications`);
    verdicts.push(...(await notificationCases(wire, options)));
    progress.tick();
    progress.phase(`${label}: race storm`);
    const races = await raceStorm(wire, options, idlePingMs, () => progress.tick());
    let dropped: DroppedStream | undefined;
    if (spec.kind === 'http') {
      progress.phase(`${label}: dropped stream`);
      dropped = await droppedStream(wire, conn.transport as StreamableHTTPClientTransport, spec.url, conn.pid, options);
      progress.tick();
    }
    // Last: anything that answered a cancelled call late, and a server still serving.
    for (const s of samples) s.answersAfterCancelMs = wire.answersFor(s.requestId).filter((a) => a.at >= s.cancelAt).map((a) => a.at - s.cancelAt);
    const finalPing = await wire.ping(options.timeoutMs);
    progress.tick();
    const cpuMeasured = conn.pid !== undefined && canMeasureCpu(conn.pid);
    verdicts.unshift(...sampleVerdicts(samples, options, cpuMeasured));
    verdicts.push(raceVerdict(races, options));
    if (dropped) verdicts.push(dropped.verdict);
    if (spec.kind === 'http') {
      const own = verdicts.find((v) => v.rule === 'cancel.no-answer');
      if (own) verdicts.push({ ...own, rule: 'http.cancel-own-post', title: 'a cancel on its own POST reaches the call', evidence: `every cancel above travelled on its own POST (the SDK client transport): ${own.evidence}` });
    }
    verdicts.push({
      rule: 'ping.after',
      title: 'the server still answers ping after all of it',
      outcome: finalPing === undefined || conn.lost() ? 'fail' : 'pass',
      evidence: finalPing === undefined ? `no answer in ${options.timeoutMs} ms${conn.lost() ? '; the connection closed' : ''}` : `answered in ${finalPing.toFixed(1)} ms`,
    });
    return {
      ...withVersion,
      verdicts,
      samples,
      races,
      idlePingMs,
      summaries: summariesOf(samples, idlePingMs),
      ...(dropped && { dropped }),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const tail = conn.stderrTail().trim();
    return { ...withVersion, verdicts, samples, races: [], idlePingMs, summaries: summariesOf(samples, idlePingMs), error: message + (tail ? `\nserver stderr ended with:\n${tail}` : '') };
  } finally {
    progress.phase(`${label}: closing`);
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
