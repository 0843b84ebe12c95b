// Serves this project's tools through the real server and calls them with the MCP SDK's client.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const cli = fileURLToPath(import.meta.resolve('mcp-cancel-pool/cli'));
const tools = fileURLToPath(new URL('../src/my-tools.ts', import.meta.url));

test('word_stats is listed and answers', async () => {
  const client = new Client({ name: 'my-tools-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'serve', '--no-builtins', '--threads', '1', '--tools', tools],
    }),
  );
  try {
    const { tools: listed } = await client.listTools();
    assert.deepEqual(
      listed.map((t) => t.name),
      ['word_stats'],
    );
    const result = await client.callTool({ name: 'word_stats', arguments: { text: 'to be or not to be', top: 2 } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'be: 2\nto: 2' }]);
  } finally {
    await client.close();
  }
});

test('every tool stops soon after a cancel (mcp-cancel-pool check-tools)', async () => {
  // Exit 1, naming the tool and why, if one goes longer than its cancelWithinMs without a ctx.checkpoint().
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'check-tools', tools]);
  assert.match(stdout, /^word_stats\t.*\tok$/m);
});
