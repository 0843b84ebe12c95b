/**
 * A quick paired check of the HTTP path's cost while changing it: ours and one
 * baseline over Streamable HTTP, zero-work `spin` calls from 32 keep-alive
 * clients, windows alternating (the first server further on each round), each
 * server pinned to CPU 1 (run this under `taskset -c 0`). Prints each window's
 * server CPU per call (the process, and its main thread) and calls/s, then the
 * median of ours ÷ the baseline over rounds. Outside the scenario contract on
 * purpose (no report, no targets): scenario 8 (`--only http-overhead`) is the
 * measurement; this is the minute-long loop a profile-then-cut step needs.
 *
 * Run: `taskset -c 0 node dist-dev/bench/http-pair.js [2026|2025] [rounds] [sdk2-coop|sdk2-piscina|fastmcp]`
 */
import { HttpServer, httpThroughput, type Caller } from './lib/http-load.js';
import type { ServerKind } from './lib/servers.js';

const [era = '2026', roundsArg = '5', baseline = 'sdk2-coop'] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (
  (era !== '2026' && era !== '2025') ||
  !Number.isInteger(rounds) ||
  rounds < 1 ||
  !['sdk2-coop', 'sdk2-piscina', 'fastmcp'].includes(baseline)
) {
  process.stderr.write(
    'usage: node dist-dev/bench/http-pair.js [2026|2025] [rounds] [sdk2-coop|sdk2-piscina|fastmcp]\n',
  );
  process.exit(2);
}
const CLIENTS = 32;
const WINDOW_MS = 1500;

const servers = [
  await HttpServer.start({ kind: 'ours', transport: 'http', threads: 2 }, '1'),
  await HttpServer.start({ kind: baseline as ServerKind, transport: 'http', threads: 2 }, '1'),
];
try {
  const callers = new Map<HttpServer, Caller[]>();
  for (const server of servers) {
    if (era === '2026')
      callers.set(
        server,
        Array.from({ length: CLIENTS }, () => () => server.spin2026({ ms: 0 })),
      );
    else {
      const sessions = [];
      for (let i = 0; i < CLIENTS; i++) sessions.push(await server.openSession());
      callers.set(
        server,
        sessions.map((session) => () => server.spin2025(session, { ms: 0 })),
      );
    }
    await httpThroughput(server, callers.get(server)!, WINDOW_MS); // warm-up
  }
  const cpu: number[] = [];
  const rate: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const out: { cpu: number; main: number; perSecond: number }[] = [];
    for (const server of round % 2 ? [...servers].reverse() : servers) {
      const w = await httpThroughput(server, callers.get(server)!, WINDOW_MS);
      if (w.serverCpuMs === undefined || w.serverMainCpuMs === undefined || w.calls === 0)
        throw new Error(`${server.label}: no CPU figures (needs /proc) or no calls`);
      out[servers.indexOf(server)] = {
        cpu: (w.serverCpuMs * 1000) / w.calls,
        main: (w.serverMainCpuMs * 1000) / w.calls,
        perSecond: w.calls / w.seconds,
      };
    }
    const [ours, base] = out as [(typeof out)[0], (typeof out)[0]];
    cpu.push(ours.cpu / base.cpu);
    rate.push(ours.perSecond / base.perSecond);
    const show = (x: (typeof out)[0]) =>
      `${x.cpu.toFixed(0)} µs (main ${x.main.toFixed(0)}), ${x.perSecond.toFixed(0)} calls/s`;
    process.stdout.write(`round ${round}: ours ${show(ours)}; ${servers[1]!.label} ${show(base)}\n`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  process.stdout.write(
    `${era}, ${CLIENTS} clients: ours ÷ ${servers[1]!.label}, median of ${rounds} rounds: CPU per call ${median(cpu).toFixed(2)}×, calls/s ${median(rate).toFixed(2)}×\n`,
  );
} finally {
  for (const server of servers) await server.close();
}
