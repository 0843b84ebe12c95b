/**
 * Rules `ping.while-running` and `ping.after`: the server answers other
 * requests while a call runs, and still does after everything the probe did.
 * The request is the era's marker: `ping` in 2025-11-25, `server/discover`
 * in 2026-07-28 (which has no `ping`). The running-time round trips come from
 * the cancelled long calls (../cancelled-call.ts).
 */
import { ERAS } from '../era.js';
import { fmt, summarize } from '../stats.js';
import type { CancelSample, Era, ProbeOptions, Verdict } from '../types.js';
import type { Wire } from '../wire.js';

export function whileRunningVerdict(samples: readonly CancelSample[], options: ProbeOptions, era: Era): Verdict {
  const marker = ERAS[era].marker;
  const pings = samples.filter((s) => !s.finishedBeforeCancel).flatMap((s) => s.pingWhileRunningMs);
  const p = summarize(pings);
  return {
    rule: 'ping.while-running',
    title: `${marker} is answered while the long tool runs`,
    outcome: pings.length === 0 || p.max >= options.timeoutMs ? 'fail' : 'pass',
    evidence: pings.length
      ? `${pings.length} × ${marker}: p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms, max ${fmt(p.max)} ms`
      : `no ${marker} was answered`,
  };
}

export async function afterAllCase(wire: Wire, options: ProbeOptions, lost: () => boolean, era: Era): Promise<Verdict> {
  const rtt = await wire.ping(options.timeoutMs);
  const marker = ERAS[era].marker;
  return {
    rule: 'ping.after',
    title: `the server still answers ${marker} after all of it`,
    outcome: rtt === undefined || lost() ? 'fail' : 'pass',
    evidence:
      rtt === undefined
        ? `no answer in ${options.timeoutMs} ms${lost() ? '; the connection closed' : ''}`
        : `answered in ${rtt.toFixed(1)} ms`,
  };
}
