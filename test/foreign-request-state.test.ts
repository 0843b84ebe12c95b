/**
 * Issue 56: a 2026 `requestState` presented to another process that has the
 * same key (an `--mrtr-key-file` shared by two servers, or a cluster key
 * shared by the front ends of two queues) verifies, but its call was never
 * there: the retry is refused with `data.reason: 'foreign'` and a message
 * that says where the call is, not `used`. The call still waits at the
 * process that parked it, and its real retry resumes it there. Real server
 * processes over stdio, and a real redis-server with a worker host.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LineServer, type Wire } from './line-client.js';
import { modernRequest } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'foreign-state-'));
const KEY = join(dir, 'shared.key');
writeFileSync(KEY, `${'e5'.repeat(32)}\n`, { mode: 0o600 });
const ASKABLE = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

let open: LineServer[] = [];
afterEach(() => {
  for (const s of open) s.kill();
  open = [];
});
function server(args: string[]): LineServer {
  const s = new LineServer(['--tools', MRTR_TOOLS, ...args]);
  open.push(s);
  return s;
}
const call = (id: string, extra: Record<string, unknown> = {}) =>
  modernRequest(id, 'tools/call', { name: 'greet_user', arguments: {}, ...extra }, {}, ASKABLE);
const resultOf = (m: Wire) => m.result as Record<string, unknown>;
/** Parks a call on `s`: its question's key and the requestState. */
async function park(s: LineServer, id: string): Promise<{ key: string; state: string }> {
  s.send(call(id));
  const r = resultOf(await s.answer(id, 60_000));
  expect(r.resultType).toBe('input_required');
  return { key: Object.keys(r.inputRequests as object)[0]!, state: r.requestState as string };
}
const retry = (id: string, p: { key: string; state: string }, name: string) =>
  call(id, { requestState: p.state, inputResponses: { [p.key]: { action: 'accept', content: { name } } } });

describe('a foreign requestState', () => {
  it('two servers with the same --mrtr-key-file: the other refuses it as foreign (not used); the issuer still resumes it', async () => {
    const a = server(['--threads', '1', '--mrtr-key-file', KEY]);
    const b = server(['--threads', '1', '--mrtr-key-file', KEY]);
    const p = await park(a, 'q');
    b.send(retry('at-b', p, 'elsewhere'));
    const refused = await b.answer('at-b', 60_000);
    expect(refused.error).toMatchObject({ code: -32602, data: { reason: 'foreign' } });
    expect((refused.error as { message: string }).message).toMatch(
      /^requestState was issued by another server process with the same key, not here: its call is parked there/,
    );
    a.send(retry('at-a', p, 'home'));
    expect(JSON.stringify(resultOf(await a.answer('at-a', 60_000)))).toMatch(/hello, home/);
    // And a real replay at the issuer is still `used`.
    a.send(retry('again', p, 'twice'));
    expect((await a.answer('again', 60_000)).error).toMatchObject({ code: -32602, data: { reason: 'used' } });
  }, 120_000);

  describe('with --redis', () => {
    let redis: RedisProcess;
    let host: HostProcess;
    beforeAll(async () => {
      redis = await startRedis();
      host = await startHost(redis.url, 'foreign-1', [
        '--threads',
        '1',
        '--cluster-key-file',
        KEY,
        '--tools',
        MRTR_TOOLS,
      ]);
    }, 90_000);
    afterAll(async () => {
      await host?.kill();
      await redis?.stop();
    });

    it('a front end of another queue with the same cluster key refuses it as foreign, naming the queue; a front end of the same queue resumes it', async () => {
      const common = ['--redis', redis.url, '--cluster-key-file', KEY];
      const parker = server([...common, '--queue', 'foreign-1']);
      const sibling = server([...common, '--queue', 'foreign-1']);
      const stranger = server([...common, '--queue', 'foreign-2']);
      const p = await park(parker, 'q');
      stranger.send(retry('other-queue', p, 'elsewhere'));
      const refused = await stranger.answer('other-queue', 60_000);
      expect(refused.error).toMatchObject({ code: -32602, data: { reason: 'foreign' } });
      expect((refused.error as { message: string }).message).toMatch(
        /issued by the front ends of another cluster \(queue 'foreign-1'\)/,
      );
      sibling.send(retry('same-queue', p, 'sibling'));
      expect(JSON.stringify(resultOf(await sibling.answer('same-queue', 60_000)))).toMatch(/hello, sibling/);
    }, 120_000);
  });
});
