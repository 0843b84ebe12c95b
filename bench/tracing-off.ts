/**
 * What tracing costs a request while it is off (no OpenTelemetry SDK
 * registered, the default): the server-span wrapper every request handler
 * runs through (src/otel/server-span.ts), against the same handler called
 * directly, in process. Nine alternating rounds of a million calls each; the
 * medians' difference is the wrapper's cost per request, to set against a
 * zero-work call's server CPU (scenario 3: 60–180 µs). The pooled zero-work
 * runs (section 3) cannot resolve a difference this size; this can.
 *
 * Run: `node dist-dev/bench/tracing-off.js`
 */
import { tracedHandler } from '#dist/src/otel/server-span.js';

type Handler = Parameters<typeof tracedHandler>[1];
const handler: Handler = (request) => Promise.resolve(request as never);
const wrapped = tracedHandler(
  'tools/call',
  handler,
  () => '2025-11-25',
  () => false,
);
const ctx = { mcpReq: { id: 1 } } as Parameters<Handler>[1];
const request = { params: { name: 'spin', arguments: {} } };

async function nsPerCall(fn: Handler, calls: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn(request, ctx);
  return Number(process.hrtime.bigint() - t0) / calls;
}

for (let round = 0; round < 3; round++) {
  await nsPerCall(handler, 200_000);
  await nsPerCall(wrapped, 200_000);
}
const direct: number[] = [];
const traced: number[] = [];
for (let round = 0; round < 9; round++) {
  direct.push(await nsPerCall(handler, 1_000_000));
  traced.push(await nsPerCall(wrapped, 1_000_000));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const [d, t] = [median(direct), median(traced)];
process.stdout.write(
  `direct ${d.toFixed(1)} ns per call, through the server-span wrapper with no SDK ${t.toFixed(1)} ns: ${(t - d).toFixed(1)} ns per request\n`,
);
