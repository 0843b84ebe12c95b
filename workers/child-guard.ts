/**
 * Every child process a stage starts is part of its call. The runtime replaces `ChildProcess.prototype.spawn`
 * before any tool module loads: `spawn`, `exec`, `execFile`, `fork` and their promisified forms all end there.
 * Each child is forced into its own process group (`detached: true`), and its pid is written into the call's row
 * of {@link ChildCells} as soon as `spawn` returns, so the main thread can signal the group whatever the worker is
 * doing (docs/guarantees.md "Child processes"). `spawnSync`/`execSync` do not pass here: they block the thread.
 */
import { ChildProcess } from 'node:child_process';
import { CHILDREN_PER_JOB, type ChildCells } from '../src/state/child-cells.js';

/** The call that owns the children started now: the job on this thread. */
export interface ChildOwner {
  /** The job's slot index (its row of cells). */
  readonly index: number;
  /** True once the call was stopped. */
  readonly stopped: boolean;
}

let owner: ChildOwner | undefined;
let installed: ChildCells | undefined;

/** The job now on this thread owns what is spawned from here on. */
export function ownChildren(job: ChildOwner): void {
  owner = job;
}

/** The job left the thread: a child started later (a stray timer) belongs to no call and is refused. */
export function disownChildren(job: ChildOwner): void {
  if (owner === job) owner = undefined;
}

/** Signals a process group; false when it has no member left (or it is not ours to signal). */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  if (!(pid > 1)) return false; // never 0, -1 or init: those mean "every process"
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    // EPERM: a member exists that we may not signal (a setuid program); it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Installs the guard once per thread; a no-op where there are no process groups (Windows). */
export function installChildGuard(cells: ChildCells): void {
  if (installed || process.platform === 'win32') return;
  installed = cells;
  const original = ChildProcess.prototype.spawn;
  type SpawnArgs = Parameters<typeof original>[0];
  ChildProcess.prototype.spawn = function guardedSpawn(this: ChildProcess, options: SpawnArgs) {
    const job = owner;
    // Outside any call (a module's top level while it loads): a child of the thread, not of a call.
    if (!job) return original.call(this, options);
    if (job.stopped) throw new Error('the call was stopped: no child process may start for it');
    const cell = cells.reserve(job.index);
    if (cell < 0) throw new Error(`a call may run at most ${CHILDREN_PER_JOB} child processes at once`);
    (options as { detached?: boolean }).detached = true;
    let result: ReturnType<typeof original>;
    try {
      result = original.call(this, options);
    } catch (error) {
      cells.fill(cell, undefined);
      throw error;
    }
    const pid = this.pid;
    cells.fill(cell, pid);
    if (pid !== undefined) {
      // The group may outlive its leader (a shell's background job): the cell stays until the group is empty,
      // and the main thread kills what is left when the call ends.
      this.once('exit', () => {
        if (!signalGroup(pid, 0)) cells.clear(cell, pid);
      });
      // The main thread may have read the row just before the pid landed in it: a stopped call's child dies here.
      if (job.stopped) signalGroup(pid, 'SIGKILL');
    }
    return result;
  };
}
