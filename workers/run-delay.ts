/**
 * This thread's time spent waiting for a core (ms): the second field of
 * Linux's /proc/thread-self/schedstat (`run_delay`, runnable but not
 * running), read with one pread of a file opened once (about 2 µs).
 *
 * Why the gap measurement needs it: on a loaded machine a busy thread is
 * runnable but off a core for long stretches (seen: 441 ms of a 1 s spin at
 * load 7.6 on 2 cores), and a gap counted in wall time alone would blame a
 * tool that checks every millisecond for the machine. The kernel adds a
 * wait to `run_delay` when the thread gets its core back, so a thread that
 * is running (it is, when it checks) reads every wait that has ended. An
 * idle thread (a stage awaiting) is not waiting for a core, so an await's
 * time still counts as a gap, as it should. Where there is no such file
 * (macOS, Windows) it reads 0 and gaps are wall time.
 */
import { closeSync, openSync, readSync } from 'node:fs';

const buf = Buffer.alloc(128);
let fd: number | undefined;
try {
  fd = openSync('/proc/thread-self/schedstat', 'r');
} catch {
  fd = undefined;
}

/** The thread's total wait for a core (ms), or 0 where it cannot be read. */
export function runDelayMs(): number {
  if (fd === undefined) return 0;
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const a = buf.indexOf(32); // ' '
    const b = buf.indexOf(32, a + 1);
    return a < 0 || b < 0 || b > n ? 0 : Number(buf.toString('latin1', a + 1, b)) / 1e6;
  } catch {
    closeSync(fd);
    fd = undefined;
    return 0;
  }
}
