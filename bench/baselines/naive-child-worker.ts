/**
 * The naive ways to run a program from a pooled task, for bench/wait-kinds.ts: a plain Piscina task file (none of
 * our runtime, so no child guard) running the same `dd | gzip | wc` pipeline as examples/tools/gzip-file.ts.
 *
 * - `ignore`: awaits the shell and never looks at a cancel; Piscina's abort terminates the thread, and the
 *   pipeline runs to its end.
 * - `kill-direct`: what careful code does: `execFile` with an AbortSignal, which a cancel (a message on `port`)
 *   aborts; Node kills the direct child, the shell, and its grandchildren `dd | gzip | wc` run to their end.
 * - `stamp`: returns when it started running (performance.timeOrigin + performance.now()), for the slot reuse.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { MessagePort } from 'node:worker_threads';
import { GZIP_PIPELINE } from '../../examples/tools/gzip-file.js';

export type NaiveChildTask =
  | { readonly way: 'ignore'; readonly file: string; readonly env: Record<string, string> }
  | {
      readonly way: 'kill-direct';
      readonly file: string;
      readonly env: Record<string, string>;
      readonly port: MessagePort;
    }
  | { readonly way: 'stamp' };

export default async function run(task: NaiveChildTask): Promise<number> {
  const at = performance.timeOrigin + performance.now();
  if (task.way === 'stamp') return at;
  const args = ['-c', GZIP_PIPELINE, 'sh', task.file];
  if (task.way === 'ignore') {
    const child = spawn('sh', args, { env: task.env, stdio: 'ignore' });
    await new Promise((resolve) => child.once('close', resolve));
    return at;
  }
  const { port } = task;
  const controller = new AbortController();
  port.once('message', () => controller.abort());
  try {
    await promisify(execFile)('sh', args, { env: task.env, signal: controller.signal });
  } catch {
    // Aborted: Node killed the shell and reported it at once.
  } finally {
    port.close();
  }
  return at;
}
