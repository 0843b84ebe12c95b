import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CallAbortedError, CancelAwareClient } from 'mcp-cancel-pool/client';

// The package's command line, resolved from here (a clone, or a project that installed it): no global install needed.
const cli = fileURLToPath(import.meta.resolve('mcp-cancel-pool/cli'));
const client = new CancelAwareClient({ name: 'my-app', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'serve'] }));

const stop = new AbortController();
setTimeout(() => stop.abort('user pressed Stop'), 1_000);
try {
  const task = await client.callToolAsTask(
    { name: 'count_primes', arguments: { limit: 5_000_000_000 } },
    {
      signal: stop.signal,
      ttl: 600_000,
      onprogress: (p) => console.log(p.progress, p.total),
      onstatus: (t) => console.log('status:', t.status),
    },
  );
  console.log('task:', task.taskId, task.task.status); // '…', 'working'
  console.log(await task.result()); // the CallToolResult, had it finished first
} catch (error) {
  // 2025: the server accepted tasks/cancel; 2026: it chose to answer directly, and the call was cancelled as any call is
  if (error instanceof CallAbortedError) console.log('cancelled:', error.reason);
  else throw error; // a JSON-RPC error of the task (ProtocolError)
}
console.log(client.era, client.stats().taskCancelsSent); // 'legacy' 1, or 'modern' 0 (no task was made)
await client.close();
