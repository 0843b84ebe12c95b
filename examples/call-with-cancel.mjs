import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CallAbortedError, CancelAwareClient } from 'mcp-cancel-pool/client';

// The package's command line, resolved from here (a clone, or a project that installed it): no global install needed.
const cli = fileURLToPath(import.meta.resolve('mcp-cancel-pool/cli'));
const client = new CancelAwareClient({ name: 'my-app', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'serve'] }));
console.log('era:', client.era); // 'modern' (2026-07-28) where the server speaks it, else 'legacy' (2025-11-25)

const stop = new AbortController();
setTimeout(() => stop.abort('user pressed Stop'), 1_000);
try {
  await client.callTool(
    { name: 'count_primes', arguments: { limit: 5_000_000_000 } },
    { signal: stop.signal, timeout: 120_000, onprogress: (p) => console.log(p.progress, p.total) },
  );
} catch (error) {
  if (error instanceof CallAbortedError) {
    // name: 'AbortError' (signal) or 'TimeoutError' (timeout); reason: the signal's reason
    console.log(error.name, error.reason, error.requestId, error.cancelSent);
  } else throw error;
}
console.log(client.stats()); // { cancelsSent: 1, staleCancelsSuppressed: 0, lateResponsesIgnored: 0, … }
await client.close();
