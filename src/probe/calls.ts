/** The requests every case sends: a tool call with a progress token, and markers in a loop while something runs. */
import { sleep } from './stats.js';
import type { Wire } from './wire.js';

/** Pause between markers while a long call runs: frequent enough to see a blocked server, light enough not to load it. */
const MARKER_GAP_MS = 10;

/** Calls `tool` with a progress token; returns the request id, its send time and the token. */
export function callTool(
  wire: Wire,
  name: string,
  args: Record<string, unknown>,
): { id: number; sentAt: number; token: string } {
  const token = `probe-progress-${wire.peekId()}`;
  const sent = wire.request('tools/call', { name, arguments: args, _meta: { progressToken: token } });
  return { ...sent, token };
}

/** Markers one after another until `stop()`; each round trip (or, unanswered, its age at `deadline`) is kept. */
export function markerLoop(
  wire: Wire,
  timeoutMs: number,
): { stop: () => void; results: (deadline: number) => Promise<number[]> } {
  let running = true;
  const rtts: number[] = [];
  let current: { sentAt: number; id: number } | undefined;
  const loop = (async () => {
    while (running) {
      current = wire.marker();
      const a = await wire.answer(current.id, timeoutMs);
      rtts.push(a ? a.at - current.sentAt : timeoutMs);
      current = undefined;
      if (!a) break;
      await sleep(MARKER_GAP_MS);
    }
  })();
  return {
    stop: () => void (running = false),
    results: async (deadline: number) => {
      const pending = current;
      await Promise.race([loop, sleep(Math.max(0, deadline - performance.now()))]);
      // A marker still unanswered at the end of the window: the server is blocked; count its age so far.
      if (pending && current === pending) rtts.push(performance.now() - pending.sentAt);
      return rtts;
    },
  };
}
