/**
 * The stalled-readers curve (issue 64): the server's peak RSS, and RSS once
 * they are gone, under N clients that each POST one 2026 call of a ~1.3 MB
 * answer and never read it, for N = 10, 100, 300 and 1,000 (or the counts
 * given). One fresh `serve --transport http` per N, default bounds, 2
 * threads; the clients are raw sockets, as a hostile client would be. Peak is
 * the kernel's high-water mark (VmHWM), so no sample can miss it; "after" is
 * VmRSS 5 s after the sockets are destroyed and the server holds no unread
 * byte. Also printed: what the server decided (calls answered, refused and
 * cancelled; streams closed). Not a scenario: it has no targets and writes no
 * report. Run: `node dist-dev/bench/stalled-readers.js [N...] [-- serve flags...]`
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const BLOB = fileURLToPath(new URL('./tools/blob.js', import.meta.url));
const ANSWER_BYTES = 1_300_000;
const MODERN = '2026-07-28';

// Counts, then `--` and extra flags for `serve` (e.g. `-- --worker-memory-mb 64`), to try a lever.
const dash = process.argv.indexOf('--');
const extra = dash === -1 ? [] : process.argv.slice(dash + 1);
const counts = (dash === -1 ? process.argv.slice(2) : process.argv.slice(2, dash)).map(Number);
const readers = counts.length > 0 ? counts : [10, 100, 300, 1000];

function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

function call(id: string, method: string, params: Record<string, unknown>) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'stalled-readers', version: '1' },
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
  const name = (params.name ?? params.uri) as string;
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    'mcp-name': name,
  };
  return { body, headers };
}

async function start(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--transport', 'http', '--port', '0', '--threads', '2', '--tools', BLOB, ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
  return { child, port };
}

async function stats(port: number): Promise<Record<string, number>> {
  const { body, headers } = call(`s${Math.random()}`, 'resources/read', { uri: 'executor://stats' });
  const text = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (t += c));
      res.on('end', () => resolve(t));
    });
    req.on('error', reject);
    req.end(body);
  });
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]!;
  const message = JSON.parse(json) as { result: { contents: { text: string }[] } };
  return JSON.parse(message.result.contents[0]!.text) as Record<string, number>;
}

function stalled(port: number, i: number): Socket {
  const { body, headers } = call(`r${i}`, 'tools/call', { name: 'blob', arguments: { bytes: ANSWER_BYTES } });
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  s.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  s.pause();
  return s;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(100);
  }
}

console.log(
  `| stalled readers | idle RSS | peak (VmHWM) | after | answered | refused | cancelled | streams closed | max unread held |`,
);
console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
for (const n of readers) {
  const { child, port } = await start();
  const pid = child.pid!;
  await stats(port);
  await sleep(1000);
  const idle = status(pid, 'VmRSS');
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) sockets.push(stalled(port, i));
  let maxUnread = 0;
  let st: Record<string, number> = {};
  // Every call decided: answered (its bytes written or held), refused, or cancelled with its stream.
  await until(async () => {
    st = await stats(port);
    maxUnread = Math.max(maxUnread, st.unreadOutputBytes!);
    return st.completed! + st.failed! + st.cancelled! >= n;
  }, 600_000);
  // While they stay stalled: the bounds' own decisions (a second's grace, the total bound) have time to act.
  for (let i = 0; i < 20; i++) {
    await sleep(100);
    maxUnread = Math.max(maxUnread, (await stats(port)).unreadOutputBytes!);
  }
  for (const s of sockets) s.destroy();
  await until(async () => (await stats(port)).unreadOutputBytes === 0, 60_000);
  await sleep(5000);
  st = await stats(port);
  const peak = status(pid, 'VmHWM');
  const after = status(pid, 'VmRSS');
  console.log(
    `| ${n} | ${idle.toFixed(0)} MB | +${(peak - idle).toFixed(0)} MB | +${(after - idle).toFixed(0)} MB | ${st.completed} | ${st.failed} | ${st.cancelled} | ${st.outputStreamsClosed} | ${(maxUnread / 1048576).toFixed(1)} MiB |`,
  );
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}
