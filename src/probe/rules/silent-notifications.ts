/**
 * Rules `*.silent`: notifications that must get no reply and must not disturb
 * the server: a late cancel, an unknown id, malformed cancels, the id of
 * `initialize` (2025 only: 2026-07-28 has none). Each is sent on its own,
 * then the wire is watched for `quietMs` and the era's marker must still be
 * answered. A reply is evidence by itself: nothing was pending to answer.
 */
import { callTool } from '../calls.js';
import { sleep } from '../stats.js';
import type { ProbeOptions, Verdict } from '../types.js';
import type { Id, Wire, WireEvent } from '../wire.js';

const show = (events: readonly WireEvent[]) =>
  events
    .map((e) =>
      e.dir === 'error'
        ? `a message the probe rejected as invalid JSON-RPC (${String(e.msg.transportError).slice(0, 80)}…)`
        : JSON.stringify(e.msg).slice(0, 200),
    )
    .join('; ');

async function silentCase(
  wire: Wire,
  options: ProbeOptions,
  rule: string,
  title: string,
  send: () => number,
): Promise<Verdict> {
  const since = send();
  await sleep(options.quietMs);
  const rtt = await wire.ping(options.timeoutMs);
  const replies = wire.unexpectedSince(since);
  if (replies.length > 0) return { rule, title, outcome: 'fail', evidence: `the server replied: ${show(replies)}` };
  if (rtt === undefined)
    return {
      rule,
      title,
      outcome: 'fail',
      evidence: `no reply (right), but a request sent after it got no answer in ${options.timeoutMs} ms`,
    };
  return {
    rule,
    title,
    outcome: 'pass',
    evidence: `nothing arrived in ${options.quietMs} ms; the next request answered in ${rtt.toFixed(1)} ms`,
  };
}

const cancelled = (params: unknown) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  ...(params !== undefined && { params }),
});

export async function silentNotificationCases(wire: Wire, options: ProbeOptions): Promise<Verdict[]> {
  const out: Verdict[] = [];
  // A late cancel: for the quick tool when there is one, else for a ping (a request like any other).
  const done = options.quickTool !== undefined ? callTool(wire, options.quickTool, options.quickArgs) : wire.marker();
  const answered = await wire.answer(done.id, options.timeoutMs);
  if (!answered) {
    out.push({
      rule: 'late-cancel.silent',
      title: 'a cancel after the response gets nothing',
      outcome: 'fail',
      evidence: `the call to cancel late was never answered (${options.timeoutMs} ms)`,
    });
  } else {
    const before = wire.answersFor(done.id).length;
    const v = await silentCase(wire, options, 'late-cancel.silent', 'a cancel after the response gets nothing', () =>
      wire.raw(cancelled({ requestId: done.id, reason: 'probe: late cancel' })),
    );
    const again = wire.answersFor(done.id).length - before;
    out.push(
      again > 0
        ? {
            ...v,
            outcome: 'fail',
            evidence: `the completed call was answered again ${again} time(s) after the late cancel`,
          }
        : v,
    );
  }
  const initId = wire.log.find((e) => e.dir === 'out' && e.msg.method === 'initialize')?.msg.id as Id | undefined;
  const cases: [string, string, Record<string, unknown>][] = [
    [
      'unknown-id.silent',
      'a cancel for an unknown id gets nothing',
      cancelled({ requestId: 987_654_321, reason: 'probe: unknown id' }),
    ],
    ['no-params.silent', 'a cancel without params gets nothing', cancelled(undefined)],
    ['null-id.silent', 'a cancel with requestId null gets nothing', cancelled({ requestId: null })],
    ['object-id.silent', 'a cancel with an object requestId gets nothing', cancelled({ requestId: { id: 1 } })],
    ...(initId !== undefined
      ? [
          [
            'initialize-id.silent',
            'a cancel naming initialize gets nothing',
            cancelled({ requestId: initId, reason: 'probe: initialize id' }),
          ] as [string, string, Record<string, unknown>],
        ]
      : []),
  ];
  for (const [rule, title, message] of cases)
    out.push(await silentCase(wire, options, rule, title, () => wire.raw(message)));
  return out;
}
