/**
 * Rules `tasks.*` (2025-11-25 tasks, with `--task-tool`): a task-augmented
 * call is created, left to run `--cancel-after-ms`, then cancelled with
 * `tasks/cancel` (never `notifications/cancelled`, which the spec forbids for
 * tasks). `tasks.cancel`: the answer says `cancelled` (the server "MUST
 * transition the task to cancelled status before sending the response").
 * `tasks.ends-cancelled`: `tasks/get` says `cancelled` right after, and still
 * at the end of the watch window ("MUST remain in cancelled status").
 * `tasks.work-stops`: the same test as `cancel.work-stops`, for the task's
 * work. The 2026-07-28 tasks extension is not probed yet: a skip says so.
 */
import { processTree, runnableThreads, treeCpuMs } from '../cpu.js';
import { ask } from '../targets.js';
import { fmt, sleep } from '../stats.js';
import type { Era, ProbeOptions, Verdict } from '../types.js';
import type { Wire } from '../wire.js';
import { stopVerdict } from './work-stops.js';

const STATE_POLL_MS = 20;

export async function tasksCase(wire: Wire, options: ProbeOptions, era: Era, pid: number | undefined): Promise<Verdict[]> {
  const skip = (evidence: string): Verdict[] => [{ rule: 'tasks.cancel', title: 'tasks/cancel ends a running task', outcome: 'skip', evidence }];
  if (options.taskTool === undefined) return [];
  if (era === '2026') return skip('the 2026-07-28 tasks extension (io.modelcontextprotocol/tasks) is not probed yet');
  const created = await ask(wire, 'tools/call', { name: options.taskTool, arguments: options.taskArgs, task: { ttl: 60_000 } }, options.timeoutMs).catch((e: unknown) => e);
  const task = (created as { task?: { taskId?: string; status?: string } }).task;
  if (created instanceof Error || typeof task?.taskId !== 'string') return skip(`no task was created: ${created instanceof Error ? created.message : JSON.stringify(created).slice(0, 160)}`);
  const taskId = task.taskId;
  await sleep(options.cancelAfterMs);
  const before = await ask(wire, 'tasks/get', { taskId }, options.timeoutMs).catch(() => undefined);
  if (before && before.status !== 'working') return skip(`the task was already ${String(before.status)} at --cancel-after-ms ${options.cancelAfterMs}: give --task-args for a longer call`);
  const tree = pid !== undefined ? processTree(pid) : [];
  const cpu0 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const cancelAt = performance.now();
  const answer = await ask(wire, 'tasks/cancel', { taskId }, options.timeoutMs).catch((e: unknown) => e);
  const out: Verdict[] = [];
  const answered = answer instanceof Error ? undefined : (answer as Record<string, unknown>);
  out.push({
    rule: 'tasks.cancel',
    title: 'tasks/cancel of a running task is answered with status cancelled',
    outcome: answered?.status === 'cancelled' ? 'pass' : 'fail',
    evidence: answered ? `answered in ${fmt(performance.now() - cancelAt)} ms with status ${String(answered.status)}` : `refused: ${(answer as Error).message}`,
  });
  const right = await ask(wire, 'tasks/get', { taskId }, options.timeoutMs).catch((e: unknown) => e);
  const end = cancelAt + options.settleMs;
  const samples: number[] = [];
  while (performance.now() < end) {
    await sleep(STATE_POLL_MS);
    if (pid !== undefined && performance.now() >= cancelAt + options.settleMs / 3) samples.push(runnableThreads(tree));
  }
  const cpu1 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const later = await ask(wire, 'tasks/get', { taskId }, options.timeoutMs).catch((e: unknown) => e);
  const statusOf = (r: unknown) => (r instanceof Error ? `error (${r.message.slice(0, 80)})` : String((r as { status?: unknown }).status));
  const ended = statusOf(right) === 'cancelled' && statusOf(later) === 'cancelled';
  out.push({
    rule: 'tasks.ends-cancelled',
    title: 'the task is cancelled right after the answer, and stays cancelled',
    outcome: ended ? 'pass' : 'fail',
    evidence: `tasks/get right after: ${statusOf(right)}; ${options.settleMs} ms later: ${statusOf(later)}`,
  });
  if (cpu0 !== undefined && cpu1 !== undefined) {
    out.push(stopVerdict('tasks.work-stops', `the task's work stops: at most ${options.maxCpuAfterCancelMs} ms CPU after tasks/cancel, no thread left spinning`, cpu1 - cpu0, samples.length ? samples.filter((n) => n > 0).length / samples.length : undefined, options));
  } else {
    out.push({ rule: 'tasks.work-stops', title: "the task's work stops after tasks/cancel", outcome: 'skip', evidence: 'CPU not measurable: an HTTP server without --pid, or no /proc' });
  }
  return out;
}
