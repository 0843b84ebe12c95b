#!/usr/bin/env node
// Cancels a long tool call and shows that its work stopped and its worker thread was kept.
//   node examples/cancel-demo.mjs [seconds before the cancel, default 3]
// It starts `mcp-cancel-pool serve` over stdio, calls `spin` for ten minutes of CPU, cancels it with an
// AbortSignal through the cancel-aware client, then reads the server's `executor://stats`.
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallAbortedError, CancelAwareClient } from 'mcp-cancel-pool/client';

const cancelAfterS = Number(process.argv[2] ?? 3);
if (!(cancelAfterS > 0)) {
  console.error('usage: node examples/cancel-demo.mjs [seconds before the cancel, > 0]');
  process.exit(2);
}
const say = (line) => console.log(`[demo] ${line}`);
const cli = fileURLToPath(import.meta.resolve('mcp-cancel-pool/cli'));

async function readStats(client) {
  const { contents } = await client.sdk.readResource({ uri: 'executor://stats' });
  return JSON.parse(contents[0].text);
}

const client = new CancelAwareClient({ name: 'cancel-demo', version: '1.0.0' });
// One worker thread and one warm standby; the server's own log goes to this terminal's stderr.
await client.connect(
  new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', '--threads', '1'], stderr: 'inherit' }),
);
try {
  const before = await readStats(client);
  say(`server up with ${before.threads} worker threads (1 + 1 standby)`);

  const spinMs = 600_000;
  say(`calling spin for ${spinMs / 1000} s of CPU; cancelling after ${cancelAfterS} s`);
  let lastProgress;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort('the demo pressed Stop'), cancelAfterS * 1000);
  const started = Date.now();
  try {
    await client.callTool(
      { name: 'spin', arguments: { ms: spinMs, stageMs: 10 } },
      { signal: stop.signal, timeout: spinMs * 2, onprogress: (p) => (lastProgress = p) },
    );
    say('the call completed, which it should not have');
    process.exitCode = 1;
  } catch (error) {
    if (!(error instanceof CallAbortedError)) throw error;
    say(
      `call aborted after ${((Date.now() - started) / 1000).toFixed(1)} s: ${error.name}, notifications/cancelled sent: ${error.cancelSent}`,
    );
    if (lastProgress) say(`work done before the cancel: ${lastProgress.progress} of ${lastProgress.total} slices`);
  } finally {
    clearTimeout(timer);
  }

  // The worker stops at its next checkpoint (every 10 ms slice here); wait until the server shows it idle.
  const cancelledAt = Date.now();
  let stats = await readStats(client);
  while (stats.running > 0 && Date.now() - cancelledAt < 10_000) stats = await readStats(client);
  say(`worker idle ${Date.now() - cancelledAt} ms after the cancel (running: ${stats.running})`);

  const next = await client.callTool({ name: 'spin', arguments: { ms: 50 } });
  say(`next call answered: ${next.content[0].text}`);

  stats = await readStats(client);
  const { cancelled, hardKilled, completed, running, threads } = stats;
  say(
    `executor://stats: cancelled: ${cancelled}, hardKilled: ${hardKilled}, completed: ${completed}, running: ${running}, threads: ${threads}`,
  );
  const stopped = cancelled === 1 && hardKilled === 0 && running === 0 && threads === before.threads;
  say(
    stopped
      ? 'the work stopped at a checkpoint and no thread was killed: the pool reused it'
      : 'unexpected counters: the cancelled work did not stop cleanly',
  );
  if (!stopped) process.exitCode = 1;
} finally {
  await client.close();
}
