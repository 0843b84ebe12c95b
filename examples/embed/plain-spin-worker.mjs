/** The worker of examples/embed/plain-server.mjs: burns CPU in slices, posting progress to the port it was given. */
export default function spin({ ms, stageMs, port }) {
  const slices = Math.max(1, Math.ceil(ms / stageMs));
  const started = performance.now();
  let reported = 0;
  for (let i = 0; i < slices; i++) {
    const end = performance.now() + Math.min(stageMs, ms - i * stageMs);
    while (performance.now() < end);
    if (port && performance.now() - reported >= 50) {
      reported = performance.now();
      port.postMessage({ progress: i + 1, total: slices });
    }
  }
  return { slices, elapsedMs: performance.now() - started };
}
