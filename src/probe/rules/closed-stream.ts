/**
 * Rule `http.dropped-stream`, 2025-11-25 Streamable HTTP: the long call sent
 * on a POST of its own whose response stream the probe then drops. 2025-11-25
 * said a disconnect SHOULD NOT be read as a cancel, hence information (a
 * warning), not a failure. In 2026-07-28 the closed stream IS the cancel, so
 * there every cancelled call is this case, judged as `http.closed-stream-cancels`
 * (a MUST) from the cancelled calls' CPU: {@link closedStreamVerdict}.
 */
import type { Http2025Transport } from '../http-2025.js';
import { sleep } from '../stats.js';
import { processTree, busyOver, treeCpuMs } from '../cpu.js';
import type { ProbeOptions, Verdict } from '../types.js';
import type { Wire } from '../wire.js';
import { busyPhrase, stopVerdict } from './work-stops.js';

export interface DroppedStream {
  readonly verdict: Verdict;
  readonly cpuAfterDropMs?: number;
  readonly nextCallMs?: number;
  readonly answered: number;
}

export async function droppedStream(
  wire: Wire,
  transport: Http2025Transport,
  url: string,
  pid: number | undefined,
  options: ProbeOptions,
): Promise<DroppedStream> {
  const rule = 'http.dropped-stream';
  const title = 'dropping the response stream of a pending POST stops the work (2026-07-28)';
  const id = wire.reserve();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (transport.sessionId) headers['mcp-session-id'] = transport.sessionId;
  if (transport.protocolVersion) headers['mcp-protocol-version'] = transport.protocolVersion;
  const abort = new AbortController();
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: options.tool, arguments: options.args },
  });
  const response = fetch(url, { method: 'POST', headers, body, signal: abort.signal }).then(
    async (r) => {
      const text = await r.text(); // reads until the stream ends or is dropped
      return { status: r.status, text };
    },
    (e: unknown) => ({ status: 0, text: String(e) }),
  );
  await sleep(options.cancelAfterMs);
  const early = await Promise.race([response, sleep(0).then(() => undefined)]);
  if (early) {
    return {
      answered: 1,
      verdict: {
        rule,
        title,
        outcome: 'skip',
        evidence: `the POST ended before the drop (HTTP ${early.status}: ${early.text.slice(0, 120)})`,
      },
    };
  }
  const cpu0 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const dropAt = performance.now();
  abort.abort();
  const next =
    options.quickTool !== undefined
      ? wire.request('tools/call', { name: options.quickTool, arguments: options.quickArgs })
      : undefined;
  const nextAnswer = next ? wire.answer(next.id, options.settleMs) : Promise.resolve(undefined);
  // CPU alone passes a burning server on a loaded machine (it gets a small share of a core): how busy its busiest thread stayed, by the kernel's counts, as well.
  const tree = pid !== undefined ? processTree(pid) : [];
  const end = dropAt + options.settleMs;
  const measured =
    pid !== undefined
      ? await busyOver(tree, dropAt + options.settleMs / 3, end)
      : await sleep(Math.max(0, end - performance.now()));
  const cpu1 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const nextA = await nextAnswer;
  const answered = wire.answersFor(id).length; // it would come on the GET stream, if anywhere
  const cpuAfterDropMs = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
  const nextCallMs = nextA ? nextA.at - dropAt : undefined;
  const facts = [
    cpuAfterDropMs !== undefined
      ? `${cpuAfterDropMs.toFixed(0)} ms CPU in the ${options.settleMs} ms after the drop`
      : 'CPU not measured (give --pid)',
    nextCallMs !== undefined ? `next call answered ${nextCallMs.toFixed(1)} ms after the drop` : undefined,
    answered ? `the dropped call's answer arrived anyway, ${answered} time(s), on another stream` : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  const base = { cpuAfterDropMs, nextCallMs, answered };
  if (cpuAfterDropMs === undefined) return { ...base, verdict: { rule, title, outcome: 'skip', evidence: facts } };
  const busy = measured ?? undefined;
  const stop = stopVerdict(rule, title, cpuAfterDropMs, busy, options);
  const stopped = stop.outcome === 'pass';
  const runnable =
    busy !== undefined
      ? `; from ${Math.round(options.settleMs / 3)} ms after the drop on, the busiest thread was ${busyPhrase(busy)}`
      : '';
  return {
    ...base,
    verdict: {
      rule,
      title,
      outcome: stopped ? 'pass' : 'warn',
      evidence: `${stopped ? '' : 'work went on after the drop: '}${facts}${runnable}`,
    },
  };
}

/** 2026 HTTP: the cancelled calls were cancelled by closing their streams; `cancel.work-stops` is then this MUST. */
export function closedStreamVerdict(workStops: Verdict): Verdict {
  return {
    ...workStops,
    rule: 'http.closed-stream-cancels',
    title: 'closing the response stream cancels the call (2026-07-28: MUST)',
    evidence: `every cancel above was a closed response stream: ${workStops.evidence}`,
  };
}
