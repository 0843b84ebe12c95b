/**
 * Reaping the children of a terminated worker thread. libuv waits only for the pids its own loop started, so a
 * child whose worker was hard-stopped stays a zombie once it dies: its parent (this process) is alive, and the loop
 * that would have waited for it is gone. Where Node has `node:ffi` (26.1 and later), `waitpid` on exactly that
 * pid reaps it; nothing else of ours waits for it, so no other waiter loses its exit status. Elsewhere the zombie
 * stays until the server exits (docs/guarantees.md "Child processes").
 */
import { readFileSync } from 'node:fs';

type WaitPid = (pid: number, status: bigint, options: number) => number;
const WNOHANG = 1;

let waitpid: WaitPid | null | undefined;

function loadWaitpid(): WaitPid | null {
  if (waitpid !== undefined) return waitpid;
  waitpid = null;
  if (process.platform !== 'linux') return null;
  try {
    const ffi = process.getBuiltinModule('node:ffi') as
      | {
          dlopen(
            path: string,
            definitions: Record<string, { arguments: string[]; return: string }>,
          ): { functions: { waitpid: WaitPid } };
        }
      | undefined;
    if (ffi)
      waitpid = ffi.dlopen('libc.so.6', { waitpid: { arguments: ['int32', 'pointer', 'int32'], return: 'int32' } })
        .functions.waitpid;
  } catch {
    // No FFI in this build, or the permission model refuses it: the zombie waits for the server's exit.
  }
  return waitpid;
}

/** Whether `pid` is a zombie child of this process (Linux). */
export function isOurZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state === 'Z' && Number(parent) === process.pid;
  } catch {
    return false;
  }
}

/** Reaps `pid` if it is a zombie of ours and this Node can: true once it is gone. */
export function reap(pid: number): boolean {
  if (!isOurZombie(pid)) return false;
  const wait = loadWaitpid();
  return wait !== null && wait(pid, 0n, WNOHANG) === pid;
}
