/**
 * The main thread's side of every job's child processes (src/state/child-cells.ts): it signals the groups
 * itself, so a stop reaches them whatever the worker is doing, a hard stop included, and so does the end of the
 * process. A stopped call's groups get SIGTERM at once and SIGKILL after the grace if any member is left; what a
 * call leaves behind when it settles (a background job, a child of a terminated worker) is taken from its row and
 * ended the same way; at the process's exit every known group gets SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CELL_ENV, signalGroup, ChildCells } from '../state/child-cells.js';
import { isOurZombie, reap } from './reap.js';

/** What the executor's stats say about child processes. */
export interface ChildCounts {
  readonly childrenStarted: number;
  readonly childrenKilled: number;
  readonly childrenAlive: number;
  /** Children of terminated worker threads that died and could not be reaped (no `node:ffi` in this Node). */
  readonly childrenZombies: number;
  /** Synchronous spawns made in calls (nothing can stop them before they end). */
  readonly childrenSync: number;
}

/** Told of each group the main thread signals, for the call's span. */
export type KillListener = (pid: number, signal: 'SIGTERM' | 'SIGKILL') => void;

/**
 * This process's direct children that lead their own group and carry {@link CELL_ENV} for one of `cells`: the
 * children whose worker thread was terminated before it wrote their pid (Linux; elsewhere none are found).
 */
function childrenOfCells(cells: readonly number[]): number[] {
  const found: number[] = [];
  if (cells.length === 0 || process.platform !== 'linux') return found;
  const marks = new Set(cells.map((cell) => `${CELL_ENV}=${process.pid}.${cell}`));
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
      if (Number(ppid) !== process.pid || pgrp !== name) continue;
      if (
        readFileSync(`/proc/${name}/environ`, 'utf8')
          .split('\0')
          .some((entry) => marks.has(entry))
      )
        found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Which of `groups` have a member that is not a zombie. Linux: one scan of /proc (a group's leader may be gone or a
 * zombie while members live on; a member may be a zombie nobody reaps). Elsewhere: any member counts.
 */
function aliveGroups(groups: readonly number[]): Set<number> {
  const alive = new Set<number>();
  if (groups.length === 0) return alive;
  if (process.platform !== 'linux') {
    for (const pid of groups) if (signalGroup(pid, 0)) alive.add(pid);
    return alive;
  }
  const wanted = new Set(groups.filter((pid) => signalGroup(pid, 0)));
  if (wanted.size === 0) return alive;
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // After the command's closing parenthesis: state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
      if (state !== 'Z' && state !== 'X' && wanted.has(Number(pgrp))) alive.add(Number(pgrp));
    } catch {
      // gone meanwhile
    }
  }
  return alive;
}

const groupAlive = (pid: number): boolean => aliveGroups([pid]).has(pid);

/** The reaper's script, beside the worker runtime in the build. */
const REAPER = fileURLToPath(new URL('../../workers/reaper.js', import.meta.url));

/** The reaper process (workers/reaper.ts) and the groups it was told of. */
interface Reaper {
  readonly child: ChildProcess;
  readonly told: Set<number>;
}

export class ChildGroups {
  /** Started with the first child a tool starts. */
  #reaper: Reaper | undefined;
  #closed = false;
  readonly cells: ChildCells;
  /** Groups being ended: pid → the SIGKILL timer, or undefined once SIGKILL was sent (kept until the group is gone). */
  readonly #ending = new Map<number, NodeJS.Timeout | undefined>();
  #killed = 0;
  /** Direct children whose worker thread was terminated: nobody waits for them but this. */
  readonly #orphans = new Set<number>();
  #reaping: NodeJS.Timeout | undefined;
  readonly #onExit = (): void => this.killAll();

  constructor(
    capacity: number,
    private readonly graceMs: number,
  ) {
    this.cells = new ChildCells(capacity);
    // 'exit' runs on every end the process still runs code for: SIGTERM/SIGINT handlers that exit, stdin closed,
    // a fatal error; synchronous, so the groups are signalled before the process is gone.
    process.on('exit', this.#onExit);
    this.#watchStarts(0);
  }

  /**
   * Wakes when a worker counts a child started (it notifies the counter word), and tells the reaper: no timer, so
   * an idle server sleeps, and a pending wait keeps no process alive.
   */
  #watchStarts(seen: number): void {
    if (this.#closed) return;
    const wait = Atomics.waitAsync(this.cells.cells, this.cells.startedWord, seen);
    const next = () => {
      if (this.#closed) return;
      this.#syncReaper();
      this.#watchStarts(this.cells.started);
    };
    if (wait.async) void wait.value.then(next);
    else setImmediate(next); // counted meanwhile
  }

  /** The call in slot `index` was stopped (cancel, deadline, session closed, shutdown): its groups are ended. */
  stop(index: number, onKill?: KillListener): void {
    for (const pid of this.cells.groups(index)) this.#end(pid, onKill);
  }

  /**
   * The call in slot `index` settled: what it left is taken from its row (the slot is reused next) and ended.
   * `orphaned`: its worker thread was terminated, so this thread reaps those children once they die.
   */
  release(index: number, orphaned: boolean, onKill?: KillListener): void {
    for (const pid of this.cells.takeAll(index)) {
      this.#end(pid, onKill);
      if (orphaned) this.#orphan(pid);
    }
    if (orphaned) this.#adoptUnwritten(this.cells.takeReserved(index), onKill);
    if (this.#reaper) this.#syncReaper();
  }

  /** Ends and reaps the children of `cells` whose pid their terminated worker never wrote. */
  #adoptUnwritten(cells: number[], onKill?: KillListener): void {
    for (const pid of childrenOfCells(cells)) {
      this.#end(pid, onKill);
      this.#orphan(pid);
    }
  }

  #orphan(pid: number): void {
    this.#orphans.add(pid);
    // Until each orphan has died and been reaped; a condition, checked as the kills land.
    this.#reaping ??= setInterval(() => this.#reapOrphans(), 50).unref();
  }

  #reapOrphans(): void {
    for (const pid of this.#orphans) if (reap(pid) || !signalGroup(pid, 0)) this.#orphans.delete(pid);
    // Zombies that cannot be reaped here stay counted; stop trying once none is still alive.
    if ([...this.#orphans].every(isOurZombie)) {
      clearInterval(this.#reaping);
      this.#reaping = undefined;
    }
  }

  /** SIGTERM now, SIGKILL after the grace if any member is left; once per group. */
  #end(pid: number, onKill?: KillListener): void {
    // A zombie leader (its worker was terminated, nobody waits for it) may still have live members: signal it.
    this.#forgetGone();
    if (this.#ending.has(pid) || !signalGroup(pid, 0)) return;
    if (groupAlive(pid)) {
      this.#killed++;
      onKill?.(pid, 'SIGTERM');
    }
    signalGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      this.#ending.set(pid, undefined);
      const alive = groupAlive(pid);
      if (signalGroup(pid, 'SIGKILL') && alive) onKill?.(pid, 'SIGKILL');
    }, this.graceMs);
    // The process may end meanwhile: its 'exit' kills what is left.
    timer.unref();
    this.#ending.set(pid, timer);
  }

  /** Every group still alive: in a row, or being ended. */
  #known(): number[] {
    this.#forgetGone();
    return [...aliveGroups([...new Set([...this.cells.all(), ...this.#ending.keys()])])];
  }

  /** Groups sent SIGKILL that are gone: forgotten (a pid may be a new group's later). */
  #forgetGone(): void {
    const killed = [...this.#ending].filter(([, timer]) => timer === undefined).map(([pid]) => pid);
    const alive = aliveGroups(killed);
    for (const pid of killed) if (!alive.has(pid)) this.#ending.delete(pid);
  }

  /**
   * Tells the reaper of the groups in the rows that it does not know yet, and of those gone. Runs as each child
   * is counted started, as a call settles, and at each stats read.
   */
  #syncReaper(): void {
    if (process.platform === 'win32') return;
    if (!this.#reaper) {
      if (this.cells.started === 0) return;
      this.#reaper = this.#startReaper();
      if (!this.#reaper) return;
    }
    const { child, told } = this.#reaper;
    const now = new Set([...this.cells.all(), ...this.#ending.keys()]);
    let lines = '';
    for (const pid of now) {
      if (told.has(pid)) continue;
      told.add(pid);
      lines += `+${pid}\n`;
    }
    for (const pid of told) {
      if (now.has(pid)) continue;
      told.delete(pid);
      lines += `-${pid}\n`;
    }
    if (lines !== '') child.stdin?.write(lines);
  }

  #startReaper(): Reaper | undefined {
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [REAPER, String(this.graceMs)], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
      });
    } catch {
      return undefined;
    }
    child.on('error', () => {}); // a reaper that cannot start leaves the in-process paths, which cover every other end
    child.stdin?.on('error', () => {});
    // Neither the reaper nor its pipe keeps this process alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return { child, told: new Set() };
  }

  counts(): ChildCounts {
    this.#syncReaper();
    return {
      childrenStarted: this.cells.started,
      childrenKilled: this.#killed + this.cells.killedByWorkers,
      childrenAlive: this.#known().length,
      childrenZombies: [...this.#orphans].filter(isOurZombie).length,
      childrenSync: this.cells.syncSpawns,
    };
  }

  /** SIGKILL to every known group, now (the process is ending). */
  killAll(): void {
    const unwritten = childrenOfCells(this.cells.reserved());
    for (const pid of [...this.cells.all(), ...this.#ending.keys(), ...unwritten]) signalGroup(pid, 'SIGKILL');
    for (const timer of this.#ending.values()) clearTimeout(timer);
    this.#ending.clear();
  }

  /**
   * The executor closed (its workers are gone): every group gets SIGTERM, the grace to end, then SIGKILL.
   * Resolves once none is left.
   */
  async close(): Promise<void> {
    this.#adoptUnwritten(this.cells.takeReserved());
    const groups = this.#known();
    for (const pid of groups) this.#end(pid);
    // Every worker is gone: every child still in a row is an orphan now.
    for (const pid of this.cells.all()) this.#orphan(pid);
    const until = Date.now() + this.graceMs;
    while (this.#known().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    this.killAll();
    this.#reapOrphans();
    process.off('exit', this.#onExit);
    this.#closed = true;
    if (this.#reaper) {
      this.#reaper.child.stdin?.end(); // nothing left for it: it exits
      this.#reaper = undefined;
    }
  }
}
