/**
 * The probe's judging and reporting, in-process and fast: which messages
 * after a cancel are the evidence that the work went on (a real SDK
 * in-memory transport under the probe's Wire), how `cancel.work-stops` weighs
 * that evidence, CPU and the uncancelled call (FAIL, PASS, INCONCLUSIVE),
 * and how the reports say INCONCLUSIVE and why a statistic has fewer values
 * than samples. The end-to-end proof on real servers is probe-work-evidence.test.ts.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { messagesAfterCancel } from '../../dist/src/probe/after-cancel.js';
import { jsonReport, junitReport } from '../../dist/src/probe/formats.js';
import { markdownReport, overall, summaryText } from '../../dist/src/probe/report.js';
import { workStopsVerdict } from '../../dist/src/probe/rules/work-stops.js';
import { summariesOf } from '../../dist/src/probe/summaries.js';
import type { CancelSample, ProbeOptions, TargetResult, UncancelledCall, Verdict } from '../../dist/src/probe/types.js';
import { Wire, wireStamp } from '../../dist/src/probe/wire.js';

const OPTIONS: ProbeOptions = {
  tool: 'long',
  args: {},
  quickTool: 'quick',
  quickArgs: {},
  taskArgs: {},
  samples: 5,
  cancelAfterMs: 300,
  settleMs: 1500,
  quietMs: 300,
  storm: 0,
  markers: 2,
  maxCpuAfterCancelMs: 100,
  timeoutMs: 10_000,
  connectTimeoutMs: 60_000,
};

function sample(over: Partial<CancelSample> = {}): CancelSample {
  return {
    requestId: 7,
    token: 'probe-progress-7',
    cancelAt: 1000,
    finishedBeforeCancel: false,
    answersAfterCancelMs: [],
    afterCancel: [],
    markersDoneAt: 1010,
    aloneFrom: 1020,
    windowEnd: 2500,
    nextCallMs: 15,
    pingWhileRunningMs: [1, 2],
    cpuAfterCancelMs: 10,
    cpuBeforeCancelMs: 200,
    runnableAtCancel: 1,
    busyAfterCancel: { share: 0.01, runPerBlockMs: 0.05 },
    idleAfterCancelMs: 100,
    progressAfterCancel: 0,
    progressCrossed: 0,
    markersAnswered: true,
    ...over,
  };
}
const computes: UncancelledCall = {
  coreShare: 0.97,
  busy: { share: 1, runPerBlockMs: Number.POSITIVE_INFINITY },
  windowMs: 1500,
  finishedEarly: false,
  cpuCanTell: true,
};
const waits: UncancelledCall = {
  coreShare: 0.02,
  busy: { share: 0.02, runPerBlockMs: 0.1 },
  windowMs: 1500,
  finishedEarly: false,
  cpuCanTell: false,
};
const progressed = sample({
  afterCancel: [
    {
      kind: 'progress',
      afterCancelMs: 412,
      excerpt:
        '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"probe-progress-7","progress":5}}',
    },
  ],
});

describe('which messages after a cancel prove the work went on', () => {
  it('counts answers, its progress, and logs and requests to the client while it was the only call open; not crossings, cancel errors, other tokens or pings', async () => {
    const [probeSide, serverSide] = InMemoryTransport.createLinkedPair();
    const wire = new Wire(probeSide);
    await probeSide.start();
    const send = (m: Record<string, unknown>) => serverSide.send(m as JSONRPCMessage);
    const cancelAt = wireStamp();
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } }); // crossed: before the markers' answers
    const markersDoneAt = wireStamp();
    await send({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'while the quick call was open' },
    });
    const aloneFrom = wireStamp();
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 2 } });
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'another', progress: 2 } });
    await send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'still working' } });
    await send({
      jsonrpc: '2.0',
      id: 'srv-1',
      method: 'sampling/createMessage',
      params: { messages: [], maxTokens: 1 },
    });
    await send({ jsonrpc: '2.0', id: 'srv-2', method: 'ping' });
    await send({ jsonrpc: '2.0', id: 42, error: { code: -32800, message: 'Request cancelled' } });
    await send({ jsonrpc: '2.0', id: 42, result: { content: [] } });
    const windowEnd = wireStamp();
    await send({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'the next call may be running' },
    });
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 3 } });
    const found = messagesAfterCancel(
      wire,
      sample({ requestId: 42, token: 'tok', cancelAt, markersDoneAt, aloneFrom, windowEnd }),
    );
    expect(found.map((m) => m.kind)).toEqual(['progress', 'log', 'request', 'answer', 'progress']);
    expect(found[1]!.excerpt).toContain('still working');
    expect(found.every((m) => m.afterCancelMs > 0)).toBe(true);
    // Markers never answered: nothing can be judged by order.
    expect(
      messagesAfterCancel(
        wire,
        sample({ requestId: 42, token: 'tok', cancelAt, markersDoneAt: undefined, aloneFrom: undefined, windowEnd }),
      ),
    ).toEqual([]);
    await probeSide.close();
  });
});

describe('cancel.work-stops weighs all the evidence', () => {
  const verdict = (samples: CancelSample[], uncancelled?: UncancelledCall, cpu = true): Verdict =>
    workStopsVerdict(samples, OPTIONS, cpu, uncancelled);

  it('a message after the cancel: FAIL, quoted, whatever the CPU and the uncancelled call, and even without CPU', () => {
    for (const v of [
      verdict([progressed, sample()], waits),
      verdict([progressed, sample()], computes),
      verdict([progressed], undefined, false),
    ]) {
      expect(v.outcome).toBe('fail');
      expect(v.evidence).toMatch(
        /^The work went on after the cancel: the server sent progress for 1 of \d cancelled calls after it had read the cancel .*first 412 ms after the cancel, progress: \{"jsonrpc":"2.0","method":"notifications\/progress"/,
      );
    }
  });

  it('nothing after the cancel and low CPU: PASS when the uncancelled call computes, INCONCLUSIVE when it waits or was not measured', () => {
    const quiet = [sample(), sample(), sample()];
    const pass = verdict(quiet, computes);
    expect(pass.outcome).toBe('pass');
    expect(pass.evidence).toMatch(
      /^The work stopped: nothing arrived for the 3 cancelled calls after the server had read the cancel, .*an uncancelled call kept 97% of a core busy/,
    );
    const unsure = verdict(quiet, waits);
    expect(unsure.outcome).toBe('inconclusive');
    expect(unsure.evidence).toMatch(
      /^Cannot tell whether the work stopped: .*an uncancelled call kept 2% of a core busy .*CPU tells from a quarter of a core on/,
    );
    expect(verdict(quiet, undefined).outcome).toBe('inconclusive');
    expect(verdict(quiet, { ...computes, finishedEarly: true, cpuCanTell: false }).evidence).toMatch(
      /ended within --cancel-after-ms/,
    );
  });

  it('CPU that goes on decides FAIL even where the uncancelled call could not tell; no CPU and no message: skip', () => {
    const burning = [
      sample({ cpuAfterCancelMs: 400, busyAfterCancel: { share: 1, runPerBlockMs: Number.POSITIVE_INFINITY } }),
      sample({ cpuAfterCancelMs: 380, busyAfterCancel: { share: 0.9, runPerBlockMs: 40 } }),
    ];
    const v = verdict(burning, waits);
    expect(v.outcome).toBe('fail');
    expect(v.evidence).toMatch(
      /^The work went on after the cancel: the server kept using CPU \(median 390 ms in the 1500 ms after each cancel, over the 100 ms limit\)\. Measured: .* 2 of 2 cancelled calls left a thread computing/,
    );
    expect(verdict([sample()], computes, false)).toMatchObject({
      outcome: 'skip',
      evidence: expect.stringMatching(/^Cannot tell whether the work stopped: .*CPU is not measurable/),
    });
  });

  it('says how many calls could not be checked for messages', () => {
    const v = verdict([sample(), sample({ markersDoneAt: undefined, markersAnswered: false })], computes);
    expect(v.evidence).toMatch(
      /1 of 2 cancelled calls could not be checked for messages: the marker requests behind their cancel went unanswered/,
    );
  });
});

describe('the reports', () => {
  const result = (verdicts: Verdict[], samples: CancelSample[] = [sample()]): TargetResult => ({
    label: 'node server.js',
    target: { kind: 'stdio', command: 'node server.js' },
    era: '2025',
    verdicts,
    samples,
    races: [],
    idlePingMs: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    summaries: summariesOf(samples, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], OPTIONS),
  });

  it('a statistic with fewer values than samples says why, in the text and the Markdown report', () => {
    const samples = [
      sample(),
      sample(),
      sample({ idleAfterCancelMs: Number.POSITIVE_INFINITY }),
      sample({ nextCallMs: undefined }),
      sample({ finishedBeforeCancel: true }),
    ];
    const s = summariesOf(samples, [1, 2], OPTIONS);
    expect(s['cancel → idle']).toMatchObject({
      n: 3,
      taken: 5,
      why: '1 call(s) ended before their cancel (not samples); 1 still busy at the end of the 1500 ms window (never fell idle)',
    });
    expect(s['cancel → next call answered']).toMatchObject({
      n: 3,
      taken: 5,
      why: '1 call(s) ended before their cancel (not samples); 1 quick call(s) unanswered within 10000 ms of the cancel',
    });
    expect(s['ping, idle']).toMatchObject({ n: 2, taken: 10, why: '8 unanswered within 10000 ms' });
    expect(s['CPU after cancel']).toMatchObject({ n: 4, taken: 5 });
    const r = result([{ rule: 'cancel.no-answer', title: 'no answer', outcome: 'pass', evidence: 'none' }], samples);
    const text = summaryText([r]);
    expect(text).toMatch(/\[1\]\s+cancel → idle\s+3 of 5\s/);
    expect(text).toContain(
      '[1] cancel → idle: 3 of 5: 1 call(s) ended before their cancel (not samples); 1 still busy at the end of the 1500 ms window (never fell idle)',
    );
    expect(markdownReport([r], OPTIONS, 'probe', [])).toContain('| cancel → idle | 3 of 5 |');
    // All five taken and all five in: no word needed.
    expect(summaryText([result([], [sample(), sample(), sample(), sample(), sample()])])).not.toContain(
      'fewer values than samples',
    );
  });

  it('INCONCLUSIVE: its own mark, result and RESULT line; a FAIL anywhere still wins; JUnit shows it as skipped, saying so', () => {
    const unsure: Verdict = {
      rule: 'cancel.work-stops',
      title: 'the work stops',
      outcome: 'inconclusive',
      evidence: 'Cannot tell whether the work stopped: …',
    };
    const failing: Verdict = { rule: 'cancel.no-answer', title: 'no answer', outcome: 'fail', evidence: 'answered' };
    const r = result([unsure]);
    expect(overall([r])).toBe('inconclusive');
    expect(overall([r, result([failing])])).toBe('fail');
    expect(overall([result([{ ...unsure, outcome: 'pass' }])])).toBe('pass');
    const text = summaryText([r]);
    expect(text).toMatch(/^ {2}INCONCLUSIVE {2}cancel\.work-stops +Cannot tell/m);
    expect(text).toMatch(/RESULT: INCONCLUSIVE \(no rule was violated, but a rule could not be decided/);
    expect(markdownReport([r], OPTIONS, 'probe', [])).toContain(
      '| the work stops (`cancel.work-stops`) | INCONCLUSIVE |',
    );
    expect((JSON.parse(jsonReport([r], OPTIONS)) as { result: string }).result).toBe('inconclusive');
    const junit = junitReport([r]);
    expect(junit).toContain('<skipped message="INCONCLUSIVE: Cannot tell whether the work stopped: …"/>');
    expect(junit).toMatch(/<testsuite [^>]*failures="0" errors="0" skipped="1">/);
  });
});
