/**
 * The reaper: a small process beside the server that ends the tools' process groups when the server dies in a way
 * no code of its own survives (SIGKILL, the OOM killer). The server writes `+<pid>` for each group it learns of and
 * `-<pid>` for each that is gone, on this process's stdin; when stdin closes (the server is gone, however it went),
 * every group still known gets SIGTERM, and SIGKILL after the grace (argv[2], ms). Started by the main thread the
 * first time a tool starts a child (src/executor/children.ts); its own session, so a signal to the server's group
 * does not end it first.
 */
const grace = Number(process.argv[2] ?? 500);
const groups = new Set<number>();
let partial = '';

// Only stdin's end ends it: a terminal's ^C reaches the server's group, which cleans up itself.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    if (pid > 1) process.kill(-pid, signal);
  } catch {
    // gone already
  }
};

process.stdin.on('data', (chunk: Buffer) => {
  const lines = (partial + chunk.toString('latin1')).split('\n');
  partial = lines.pop()!;
  for (const line of lines) {
    const pid = Number(line.slice(1));
    if (!Number.isInteger(pid) || pid <= 1) continue;
    if (line[0] === '+') groups.add(pid);
    else groups.delete(pid);
  }
});
process.stdin.on('close', () => {
  if (groups.size === 0) process.exit(0);
  for (const pid of groups) signalGroup(pid, 'SIGTERM');
  setTimeout(() => {
    for (const pid of groups) signalGroup(pid, 'SIGKILL');
    process.exit(0);
  }, grace);
});
process.stdin.resume();
