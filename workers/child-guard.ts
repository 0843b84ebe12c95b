/**
 * Every child process a stage starts is part of its call. The runtime replaces `ChildProcess.prototype.spawn`
 * before any tool module loads: `spawn`, `exec`, `execFile`, `fork` and their promisified forms all end there.
 * Each child is forced into its own process group (`detached: true`), and its pid is written into the call's row
 * of {@link ChildCells} as soon as `spawn` returns, so the main thread can signal the group whatever the worker is
 * doing (docs/guarantees.md "Child processes"). `spawnSync`, `execSync` and `execFileSync` do not pass there: they
 * block the thread until the program ends, so nothing can stop them; the guard counts each one made in a call
 * (`childrenSync`, which `check-tools` reports per tool).
 */
import { ChildProcess } from 'node:child_process';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { CELL_ENV, CHILDREN_PER_JOB, signalGroup, type ChildCells } from '../src/state/child-cells.js';

/** The call that owns the children started now: the job on this thread. */
export interface ChildOwner {
  /** The job's slot index (its row of cells). */
  readonly index: number;
  /** True once the call was stopped. */
  readonly stopped: boolean;
}

let owner: ChildOwner | undefined;
/** Set once the tool modules have loaded: a child started after that, outside any call, belongs to nobody. */
let loaded = false;

/** The job now on this thread owns what is spawned from here on. */
export function ownChildren(job: ChildOwner): void {
  owner = job;
}

/** The job left the thread. */
export function disownChildren(job: ChildOwner): void {
  if (owner === job) owner = undefined;
}

/** The tool modules have loaded: from now on every child belongs to a call, or is ended at once. */
export function toolsLoaded(): void {
  loaded = true;
}

let installed = false;

/** Installs the guard once per thread; a no-op where there are no process groups (Windows). */
export function installChildGuard(cells: ChildCells): void {
  if (installed || process.platform === 'win32') return;
  installed = true;
  // Node's own method, which @types/node does not declare: every child of child_process starts in it.
  const proto = ChildProcess.prototype as unknown as { spawn: (this: ChildProcess, options: object) => unknown };
  const original = proto.spawn;
  proto.spawn = function guardedSpawn(this: ChildProcess, options: object) {
    const job = owner;
    // A module's top level while it loads: a child of the thread (a helper daemon), not of a call.
    if (!job && !loaded) return original.call(this, options);
    // Its own group, always: the main thread signals -pid, which reaches every process the child starts.
    (options as { detached?: boolean }).detached = true;
    if (!job) {
      // Started after its call ended (a stray timer): nothing may outlive its call, so it ends at once.
      const result = original.call(this, options);
      cells.countStarted();
      if (this.pid !== undefined && signalGroup(this.pid, 'SIGKILL')) cells.countWorkerKill();
      return result;
    }
    const cell = cells.reserve(job.index);
    if (cell < 0) throw new Error(`a call may run at most ${CHILDREN_PER_JOB} child processes at once`);
    // Before the pid is known: if this thread is terminated between the spawn and the write of its pid, the main
    // thread finds the child by this entry (a worker's termination interrupts at the next JS it runs).
    const spawnOptions = options as { envPairs?: string[] };
    if (Array.isArray(spawnOptions.envPairs))
      spawnOptions.envPairs = [...spawnOptions.envPairs, `${CELL_ENV}=${process.pid}.${cell}`];
    let result: unknown;
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
      // and the main thread ends what is left when the call settles.
      this.once('exit', () => {
        if (!signalGroup(pid, 0)) cells.clear(cell, pid);
      });
      // The main thread read the row before the pid landed in it, after the stop: this child never gets going.
      if (job.stopped && signalGroup(pid, 'SIGKILL')) cells.countWorkerKill();
    }
    return result;
  };
  // The module object, not the ESM namespace (read-only): each synchronous form is counted when a call makes it,
  // and syncBuiltinESMExports() gives the counted forms to `import { execSync } from 'node:child_process'` too.
  const childProcess = createRequire(import.meta.url)('node:child_process') as Record<string, unknown>;
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const sync = childProcess[name] as (...args: unknown[]) => unknown;
    childProcess[name] = function countedSync(this: unknown, ...args: unknown[]) {
      if (owner) cells.countSyncSpawn();
      return sync.apply(this, args);
    };
  }
  syncBuiltinESMExports();
}
