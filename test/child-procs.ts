/** Counting a test's child processes by the marker in their command line (/proc, Linux), and ending them. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live processes whose command line holds `marker` (a zombie's command line is empty: never counted). */
export function marked(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Zombie children of `ppid` (exited, never waited for). */
export function zombiesOf(ppid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' && Number(parent) === ppid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Ends whatever still carries `marker` (a failed test's leftovers): the test ends every process it starts. */
export function killMarked(marker: string): void {
  for (const pid of marked(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

let n = 0;
/** A marker unique to this test process and call. */
export function newMarker(what: string): string {
  return `mcpcp_${what.toLowerCase()}_${process.pid}_${++n}_${Date.now().toString(36)}`;
}
