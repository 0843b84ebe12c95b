/**
 * Puts this worker thread in the scheduling class the executor asked for.
 *
 * Why it matters: a thread that spins on CPU work is not preempted when a
 * sleeping thread wakes up; the kernel lets it finish its time slice, which
 * it notices only at the next timer tick (4 ms at HZ 250). A cancel, a ping
 * or a Redis reply for the main thread can wait that long for a core. A
 * SCHED_IDLE thread is preempted at once by any normal thread, and runs on
 * whatever CPU time nothing else wants.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { AppliedToolPriority, ToolPriority } from '../src/pool/protocol.js';

/** Linux's policy number for SCHED_IDLE (`/proc/<tid>/stat` field 41). */
const SCHED_IDLE = 5;

export function applyToolPriority(wanted: ToolPriority): AppliedToolPriority {
  if (wanted === 'normal') return { priority: 'normal' };
  if (process.platform !== 'linux')
    return { priority: 'normal', note: `SCHED_IDLE needs Linux (this is ${process.platform})` };
  let tid: number;
  try {
    tid = ownThreadId();
  } catch (error) {
    // Never let a scheduling wish stop a thread from starting.
    return {
      priority: 'normal',
      note: `cannot find this thread's id in /proc: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let why: string;
  try {
    // No Node API sets a scheduling policy; chrt (util-linux, BusyBox) does, for one thread id, without
    // privileges. Short options: BusyBox's chrt has no long ones.
    execFileSync('chrt', ['-i', '-p', '0', String(tid)], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000 });
    why = 'chrt ran but the policy did not change';
  } catch (error) {
    why = `chrt failed: ${reasonOf(error)}`;
  }
  try {
    // Read back whatever happened: a chrt killed by its timeout may still have set the class.
    if (policyOf(tid) === SCHED_IDLE) return { priority: 'idle' };
  } catch (error) {
    why += `; cannot read the policy back: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    // Second best: the smallest share of CPU, but no immediate preemption (the tick wait remains).
    setPriority(tid, 19);
    return { priority: 'nice-19', note: why };
  } catch (error) {
    return {
      priority: 'normal',
      note: `${why}; setpriority failed too: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** What chrt said on stderr, else how it ended. */
function reasonOf(error: unknown): string {
  const e = error as { stderr?: Buffer | string; code?: string; signal?: string; message?: string };
  const stderr = e.stderr?.toString().trim();
  if (stderr) return stderr.split('\n')[0]!;
  if (e.code) return e.code === 'ENOENT' ? 'chrt not found (util-linux is not installed?)' : e.code;
  if (e.signal) return `killed by ${e.signal} (timed out?)`;
  return e.message ?? String(error);
}

/** This thread's kernel id: `/proc/thread-self` links to `<pid>/task/<tid>`. */
function ownThreadId(): number {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (!Number.isSafeInteger(tid) || tid <= 0) throw new Error(`/proc/thread-self does not name a thread id`);
  return tid;
}

function policyOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; policy is field 41.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
}
