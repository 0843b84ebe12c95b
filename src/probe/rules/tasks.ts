/**
 * Rules `tasks.*` (with `--task-tool`), per era: a task is created, left
 * to run `--cancel-after-ms`, then cancelled with `tasks/cancel` (never
 * `notifications/cancelled`, which both eras forbid for tasks).
 * - 2025-11-25 (`task` param of `tools/call`): `tasks.cancel`: the answer
 *   says `cancelled` (the server "MUST transition the task to cancelled
 *   status before sending the response"). `tasks.ends-cancelled`:
 *   `tasks/get` says `cancelled` right after, and still at the end of the
 *   watch window ("MUST remain in cancelled status").
 * - 2026-07-28 (the extension `io.modelcontextprotocol/tasks`, declared in
 *   the request's `clientCapabilities`): `tasks.cancel`: acknowledged with a
 *   result. The extension lets cancellation be eventually consistent and
 *   cooperative, so `tasks.ends-cancelled` asks only that the task is
 *   `cancelled` by the end of the window, and a task (or work) that goes on
 *   is a WARN, not a FAIL.
 * `tasks.work-stops`: the same test as `cancel.work-stops`, for the task's work.
 */
import { processTree, busyOver, treeCpuMs } from '../cpu.js';
import { ask } from '../targets.js';
import { fmt, sleep } from '../stats.js';
import { META } from '../era.js';
import type { Era, ProbeOptions, Verdict } from '../types.js';
import type { Wire } from '../wire.js';
import { stopVerdict } from './work-stops.js';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** 2026: the extension is declared on every request that uses it (tools/call, tasks/get, tasks/cancel); else -32021. */
const DECLARES_TASKS = { _meta: { [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } } };

/** How each era asks for a task and says it made one. */
const CREATE: Record<
  Era,
  {
    params(options: ProbeOptions): Record<string, unknown>;
    taskId(result: Record<string, unknown>): string | undefined;
  }
> = {
  '2025': {
    params: (o) => ({ name: o.taskTool, arguments: o.taskArgs, task: { ttl: 60_000 } }),
    taskId: (r) => (r as { task?: { taskId?: unknown } }).task?.taskId as string | undefined,
  },
  '2026': {
    params: (o) => ({ name: o.taskTool, arguments: o.taskArgs, ...DECLARES_TASKS }),
    taskId: (r) => (r.resultType === 'task' && typeof r.taskId === 'string' ? r.taskId : undefined),
  },
};

export async function tasksCase(
  wire: Wire,
  options: ProbeOptions,
  era: Era,
  pid: number | undefined,
): Promise<Verdict[]> {
  const skip = (evidence: string): Verdict[] => [
    { rule: 'tasks.cancel', title: 'tasks/cancel ends a running task', outcome: 'skip', evidence },
  ];
  if (options.taskTool === undefined) return [];
  const created = await ask(wire, 'tools/call', CREATE[era].params(options), options.timeoutMs).catch(
    (e: unknown) => e,
  );
  const taskId = created instanceof Error ? undefined : CREATE[era].taskId(created as Record<string, unknown>);
  if (taskId === undefined)
    return skip(
      `no task was created: ${created instanceof Error ? created.message : JSON.stringify(created).slice(0, 160)}`,
    );
  const modern = era === '2026';
  const ofTask = { taskId, ...(modern && DECLARES_TASKS) };
  await sleep(options.cancelAfterMs);
  const before = await ask(wire, 'tasks/get', ofTask, options.timeoutMs).catch(() => undefined);
  if (before && before.status !== 'working')
    return skip(
      `the task was already ${String(before.status)} at --cancel-after-ms ${options.cancelAfterMs}: give --task-args for a longer call`,
    );
  const tree = pid !== undefined ? processTree(pid) : [];
  const cpu0 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const cancelAt = performance.now();
  const answer = await ask(wire, 'tasks/cancel', ofTask, options.timeoutMs).catch((e: unknown) => e);
  const out: Verdict[] = [];
  const answered = answer instanceof Error ? undefined : (answer as Record<string, unknown>);
  const ackedIn = `${fmt(performance.now() - cancelAt)} ms`;
  out.push(
    modern
      ? {
          rule: 'tasks.cancel',
          title: 'tasks/cancel of a running task is acknowledged',
          outcome: answered ? 'pass' : 'fail',
          evidence: answered
            ? // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the wire's value as sent
              `acknowledged in ${ackedIn}${answered.resultType === undefined ? '' : ` (resultType ${String(answered.resultType)})`}`
            : `refused: ${(answer as Error).message}`,
        }
      : {
          rule: 'tasks.cancel',
          title: 'tasks/cancel of a running task is answered with status cancelled',
          outcome: answered?.status === 'cancelled' ? 'pass' : 'fail',
          evidence: answered
            ? `answered in ${ackedIn} with status ${String(answered.status)}`
            : `refused: ${(answer as Error).message}`,
        },
  );
  const right = await ask(wire, 'tasks/get', ofTask, options.timeoutMs).catch((e: unknown) => e);
  const end = cancelAt + options.settleMs;
  const busy =
    pid !== undefined
      ? await busyOver(tree, cancelAt + options.settleMs / 3, end)
      : await sleep(Math.max(0, end - performance.now()));
  const cpu1 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const later = await ask(wire, 'tasks/get', ofTask, options.timeoutMs).catch((e: unknown) => e);
  const statusOf = (r: unknown) =>
    r instanceof Error ? `error (${r.message.slice(0, 80)})` : String((r as { status?: unknown }).status);
  // 2026 may be eventually consistent: only the end of the window counts, and a miss is a WARN.
  const ended = statusOf(later) === 'cancelled' && (modern || statusOf(right) === 'cancelled');
  out.push({
    rule: 'tasks.ends-cancelled',
    title: modern
      ? 'the task ends cancelled within the watch window'
      : 'the task is cancelled right after the answer, and stays cancelled',
    outcome: ended ? 'pass' : modern ? 'warn' : 'fail',
    evidence: `tasks/get right after: ${statusOf(right)}; ${options.settleMs} ms later: ${statusOf(later)}`,
  });
  if (cpu0 !== undefined && cpu1 !== undefined) {
    const stop = stopVerdict(
      'tasks.work-stops',
      `the task's work stops: at most ${options.maxCpuAfterCancelMs} ms CPU after tasks/cancel, no thread left working`,
      cpu1 - cpu0,
      busy ?? undefined,
      options,
    );
    // The extension's cancellation is cooperative ("need not stop the work"): burning on is reported, not failed.
    out.push(modern && stop.outcome === 'fail' ? { ...stop, outcome: 'warn' } : stop);
  } else {
    out.push({
      rule: 'tasks.work-stops',
      title: "the task's work stops after tasks/cancel",
      outcome: 'skip',
      evidence: 'CPU not measurable: an HTTP server without --pid, or no /proc',
    });
  }
  return out;
}
