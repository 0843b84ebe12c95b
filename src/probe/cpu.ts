/**
 * CPU time of a process and all its descendants, from Linux /proc: what a
 * server burns after a cancel, whether it runs its tools in threads, child
 * processes or behind a launcher such as `npx`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 where it cannot be asked). */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface Stat {
  readonly ppid: number;
  /** utime + stime + cutime + cstime, in ticks: its own threads plus its children that have exited and been reaped. */
  readonly ticks: number;
  /** utime + stime alone. */
  readonly ownTicks: number;
}

function readStat(file: string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone between listing and reading
  }
  // Fields after the command name, which may itself contain spaces and parentheses.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i]);
  return { ppid: n(1), ownTicks: n(11) + n(12), ticks: n(11) + n(12) + n(13) + n(14) };
}

/** utime + stime of one /proc stat file (a process or one of its threads), in ms. */
export function statCpuMs(file: string): number {
  const s = readStat(file);
  if (!s) throw new Error(`cannot read ${file}`);
  return (s.ownTicks * 1000) / clockTicks();
}

/** Whether this system has /proc to read CPU times from. */
export function canMeasureCpu(pid: number): boolean {
  return readStat(`/proc/${pid}/stat`) !== undefined;
}

/**
 * CPU ms used so far by `pid` and every live descendant (found through each
 * process's parent id), plus what their reaped children used (cutime, cstime).
 * Undefined once `pid` itself is gone.
 */
export function treeCpuMs(pid: number): number | undefined {
  const root = readStat(`/proc/${pid}/stat`);
  if (!root) return undefined;
  const children = new Map<number, number[]>();
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p) || p === pid) continue;
    const s = readStat(`/proc/${p}/stat`);
    if (!s) continue;
    stats.set(p, s);
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), p]);
  }
  let ticks = root.ticks;
  const todo = [...(children.get(pid) ?? [])];
  while (todo.length) {
    const p = todo.pop()!;
    ticks += stats.get(p)!.ticks;
    todo.push(...(children.get(p) ?? []));
  }
  return (ticks * 1000) / clockTicks();
}

/** `pid` and every live descendant, found through each process's parent id. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p) || p === pid) continue;
    const s = readStat(`/proc/${p}/stat`);
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), p]);
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/**
 * How many threads of these processes are runnable right now (state `R`:
 * on a core or waiting for one). Unlike CPU time this does not depend on the
 * machine's load: a thread that spins is runnable whether or not the
 * scheduler gives it a core; a thread that waits for work sleeps.
 */
export function runnableThreads(pids: readonly number[]): number {
  let n = 0;
  for (const { dir } of threadsOf(pids)) {
    let text: string;
    try {
      text = readFileSync(`${dir}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) === 'R') n++;
  }
  return n;
}

/** Every thread of these processes now: its key (`pid/tid`) and its /proc folder; a process gone is skipped. */
function threadsOf(pids: readonly number[]): { key: string; dir: string }[] {
  return pids.flatMap((pid) => {
    try {
      return readdirSync(`/proc/${pid}/task`).map((tid) => ({ key: `${pid}/${tid}`, dir: `/proc/${pid}/task/${tid}` }));
    } catch {
      return []; // gone
    }
  });
}

/** One thread at one moment, as the kernel counts it. */
interface ThreadCount {
  /** ns on a core (/proc/<pid>/task/<tid>/schedstat, field 1). */
  readonly runNs: number;
  /** ns queued for a core (field 2). */
  readonly waitNs: number;
  /** Times it gave up the core by blocking (`voluntary_ctxt_switches`). */
  readonly voluntary: number;
  /** It was runnable (state R) at the read. */
  readonly runnable: boolean;
}

/** Every thread of a process tree at one moment. */
export interface RunnableSnapshot {
  /** performance.now() when it was read. */
  readonly at: number;
  /** By `<pid>/<tid>`. */
  readonly threads: ReadonlyMap<string, ThreadCount>;
}

/** How busy one thread was between two snapshots, by the kernel's counts. */
export interface Busy {
  /** Share of the time it was runnable (on a core or queued for one), at most 1. */
  readonly share: number;
  /** ms on a core per time it blocked (Infinity if it never did): a thread that computes runs long between waits, one that wakes to look at something and sleeps again does not, at any load. */
  readonly runPerBlockMs: number;
}

function threadCount(dir: string): ThreadCount | undefined {
  try {
    const [runNs, waitNs] = readFileSync(`${dir}/schedstat`, 'utf8').trim().split(' ').map(Number);
    const status = readFileSync(`${dir}/status`, 'utf8');
    const voluntary = Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1]);
    const state = /^State:\s*(\S)/m.exec(status)?.[1];
    if (![runNs, waitNs, voluntary].every(Number.isFinite)) return undefined;
    return { runNs: runNs!, waitNs: waitNs!, voluntary, runnable: state === 'R' };
  } catch {
    return undefined; // gone, or a kernel without schedstat
  }
}

/**
 * Reads every thread's run and run-queue time, voluntary context
 * switches and state. Undefined where the kernel keeps no
 * schedstat. Two snapshots tell how busy each thread was between them,
 * from the kernel's counts, not from how often a (possibly starved) probe
 * got to look.
 */
export function runnableSnapshot(pids: readonly number[]): RunnableSnapshot | undefined {
  const threads = new Map<string, ThreadCount>();
  for (const { key, dir } of threadsOf(pids)) {
    const count = threadCount(dir);
    if (count) threads.set(key, count);
  }
  return threads.size > 0 ? { at: performance.now(), threads } : undefined;
}

/**
 * The busiest thread of the tree between two snapshots: the one that was
 * runnable the largest share of the time, preferring one that ran long
 * between blocking waits. The share is run plus run-queue time over the
 * wall time; a thread runnable at both reads that never blocked in between
 * was runnable all along (1). The kernel books queue time when the thread
 * next runs, so each read misses at most the wait in progress. On a loaded
 * machine a thread woken every few ms may be queued much of the time too,
 * but it runs microseconds before it blocks again; one that computes blocks
 * rarely (a JavaScript one now and then for its garbage collector): hence
 * both numbers. Undefined if either snapshot is missing or no time passed.
 */
export function busiestThread(from: RunnableSnapshot | undefined, to: RunnableSnapshot | undefined): Busy | undefined {
  if (!from || !to || to.at <= from.at) return undefined;
  const wallNs = (to.at - from.at) * 1e6;
  let best: Busy = { share: 0, runPerBlockMs: 0 };
  const rank = (b: Busy) => Math.min(1, b.runPerBlockMs / 5) * b.share;
  for (const [thread, before] of from.threads) {
    const after = to.threads.get(thread);
    if (after === undefined) continue;
    const blocks = after.voluntary - before.voluntary;
    const runMs = Math.max(0, after.runNs - before.runNs) / 1e6;
    const spun = before.runnable && after.runnable && blocks === 0;
    const busy: Busy = {
      share: spun ? 1 : Math.min(1, Math.max(0, after.runNs + after.waitNs - before.runNs - before.waitNs) / wallNs),
      runPerBlockMs: blocks > 0 ? runMs / blocks : runMs > 0 || spun ? Number.POSITIVE_INFINITY : 0,
    };
    if (rank(busy) > rank(best) || (rank(busy) === rank(best) && busy.share > best.share)) best = busy;
  }
  return best;
}

/**
 * How busy the busiest thread of the tree was over `[from, to]`
 * (performance.now() times), read at those two moments. Waits until `to`.
 */
export async function busyOver(pids: readonly number[], from: number, to: number): Promise<Busy | undefined> {
  const wait = (until: number) =>
    new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, until - performance.now())));
  await wait(from);
  const first = runnableSnapshot(pids);
  await wait(to);
  return busiestThread(first, runnableSnapshot(pids));
}
