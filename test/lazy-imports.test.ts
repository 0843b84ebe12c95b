/**
 * A server on the local pool never loads BullMQ or ioredis: they are for `--redis` front ends (README "Many
 * hosts"), and loaded anyway they added 5.6 MB to the main thread's live heap, which every mark-compact walks, and
 * a sixth of a second to start-up. The server subprocess runs with a resolve hook (test/fixtures/import-trace.ts)
 * that names each module it resolves.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { LineServer } from './line-client.js';
import { perTestServers } from './per-test-servers.js';

const TRACE = fileURLToPath(new URL('../dist-dev/test/fixtures/import-trace.js', import.meta.url));
const start = perTestServers((args) => new LineServer(args, ['--import', TRACE]));
const resolved = (stderr: string) => [...stderr.matchAll(/^\[import-trace\] (.+)$/gm)].map((m) => m[1]!);

describe('lazy imports', () => {
  it('a stdio server on the local pool serves calls and tasks without loading BullMQ or ioredis', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
    expect(await s.answer('call')).toHaveProperty('result');
    // A task-augmented call goes through the task runner, whose store serve-tasks.ts picks by backend.
    s.send({ jsonrpc: '2.0', id: 'task', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 }, task: { ttl: 60_000 } } });
    expect(await s.answer('task')).toHaveProperty('result.task.taskId');
    const urls = resolved(s.stderr);
    // The hook saw the server's own dependencies, so an absent module is absent, not unseen.
    expect(urls.some((u) => u.includes('/node_modules/piscina/'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/@modelcontextprotocol/'))).toBe(true);
    expect(urls.filter((u) => /\/node_modules\/(bullmq|ioredis)\//.test(u))).toEqual([]);
  });
});
