import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readdirSync, readFileSync } from 'node:fs';
const t = new StdioClientTransport({ command: process.execPath, args: ['/work/wt-22/dist/src/cli/main.js', 'serve', '--threads', '1', '--spare-threads', '0', '--grace-ms', '100', '--tool-priority', 'idle', '--tools', '/work/wt-22/dist/test/fixtures/sched-tools.js'], stderr: 'inherit' });
const c = new Client({ name: 't', version: '1' });
await c.connect(t);
const st = async () => JSON.parse((await c.readResource({ uri: 'executor://stats' })).contents[0].text);
const pid = t.pid;
const pol = () => readdirSync(`/proc/${pid}/task`).map((tid) => { try { return tid + ':' + /^policy\s*:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'))[1] + ':' + readFileSync(`/proc/${pid}/task/${tid}/stat`,'utf8').split(') ')[1].split(' ')[0]; } catch { return tid+':gone'; } }).filter(s => /:5:/.test(s));
await c.callTool({ name: 'thread_sched', arguments: {} });
const ac = new AbortController();
const p = c.callTool({ name: 'ignore_cancel', arguments: { ms: 60000 } }, undefined, { signal: ac.signal }).catch(e => e);
while ((await st()).running !== 1) await new Promise(r => setTimeout(r, 5));
const t0 = Date.now();
ac.abort();
await p;
for (;;) {
  const s = await st();
  console.log(Date.now() - t0, s.hardKilled, s.running, s.stopping, s.threads, pol().join(' '));
  if (s.hardKilled === 1) break;
  if (Date.now()-t0 > 8000) { for (const tid of readdirSync(`/proc/${pid}/task`)) { try { console.log(tid, readFileSync(`/proc/${pid}/task/${tid}/comm`,'utf8').trim(), readFileSync(`/proc/${pid}/task/${tid}/stat`,'utf8').split(') ')[1].split(' ')[0], readFileSync(`/proc/${pid}/task/${tid}/wchan`,'utf8'), readFileSync(`/proc/${pid}/task/${tid}/syscall`,'utf8').split(' ').slice(0,3).join(' ')); } catch (e) { console.log(tid, e.message); } } break; }
  await new Promise(r => setTimeout(r, 1000));
}
console.log('sched', (await c.callTool({ name: 'thread_sched', arguments: {} })).content[0].text, Date.now() - t0);
await c.close();
