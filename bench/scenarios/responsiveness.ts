/**
 * Scenario 5: is the server still there while every worker is busy? Start
 * enough spin calls to occupy every worker (ours: one per thread; (a): its
 * one thread), then send a ping every 10 ms (open loop, not waiting for the
 * previous) until the calls end, and time each ping's round trip.
 */
import { cdfChart } from '#dist/src/probe/charts.js';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { type Connection, specLabel, type ServerSpec, withConnections } from '../lib/servers.js';
import { alternate, fmt, sleep, summarize, us } from '#dist/src/probe/stats.js';

const THREADS = 2;
const PING_EVERY_MS = 10;
const STAGE_MS = 1;

// Quick: long enough for tens of pings per server while both cores are busy (a smoke run, not figures to quote).
const params = (quick: boolean) => (quick ? { rounds: 1, busyMs: 400 } : { rounds: 3, busyMs: 2000 });

const SPECS: readonly ServerSpec[] = [
  { kind: 'ours', transport: 'stdio', threads: THREADS },
  { kind: 'ours', transport: 'http', threads: THREADS },
  // One worker on two cores: the main thread has a core of its own. Shows how much of the ping time is CPU oversubscription.
  { kind: 'ours', transport: 'stdio', threads: 1, tag: '1 thread' },
  { kind: 'main-thread', transport: 'stdio', threads: 1 },
  { kind: 'main-thread-yield', transport: 'stdio', threads: 1 },
];

interface Ping {
  server: string;
  round: number;
  /** Sent this long after the busy calls were sent. */
  sentAtMs: number;
  rttMs: number;
  /** Answered before the last busy call was answered. */
  answeredWhileBusy: boolean;
}

async function round(conn: Connection, index: number, busyMs: number): Promise<{ pings: Ping[]; busyCallMs: number }> {
  const workers = conn.spec.kind === 'ours' ? conn.spec.threads : 1;
  const start = performance.now();
  let busyEnd = Number.POSITIVE_INFINITY;
  const busy = Promise.all(
    Array.from({ length: workers }, () => conn.callSpin({ ms: busyMs, stageMs: STAGE_MS })),
  ).then(() => (busyEnd = performance.now()));
  await sleep(20); // the calls have reached their workers
  const pings: Promise<Ping>[] = [];
  while (busyEnd === Number.POSITIVE_INFINITY) {
    const t0 = performance.now();
    pings.push(
      conn.client.ping().then(() => {
        const t1 = performance.now();
        return {
          server: conn.label,
          round: index,
          sentAtMs: us(t0 - start),
          rttMs: us(t1 - t0),
          answeredWhileBusy: t1 < busyEnd,
        };
      }),
    );
    await Promise.race([sleep(PING_EVERY_MS), busy]);
  }
  return { pings: await Promise.all(pings), busyCallMs: busyEnd - start };
}

export const responsiveness: Scenario = {
  id: 'responsiveness',
  title: '5. Responsiveness while every worker is busy',
  estimateMs: (quick) => params(quick).rounds * SPECS.length * (params(quick).busyMs + 150),

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const pings: Ping[] = [];
    const busyCalls: { server: string; round: number; ms: number }[] = [];
    await withConnections(SPECS, (conns) =>
      alternate(
        conns,
        () => p.rounds,
        async (conn, r) => {
          const result = await round(conn, r, p.busyMs);
          pings.push(...result.pings);
          busyCalls.push({ server: conn.label, round: r, ms: us(result.busyCallMs) });
          ctx.progress.tick(p.busyMs + 150);
        },
      ),
    );

    const labels = SPECS.map(specLabel);
    const rtts = (label: string) => pings.filter((x) => x.server === label).map((x) => x.rttMs);
    const rows = labels.map((label) => {
      const s = summarize(rtts(label));
      const mine = pings.filter((x) => x.server === label);
      const during = mine.filter((x) => x.answeredWhileBusy).length;
      const busy = summarize(busyCalls.filter((b) => b.server === label).map((b) => b.ms));
      return [
        label,
        s.n,
        `${during} (${((100 * during) / Math.max(1, s.n)).toFixed(0)} %)`,
        fmt(s.p50),
        fmt(s.p99),
        fmt(s.max),
        fmt(busy.p50),
      ];
    });
    const table: Table = {
      title: `Ping round trip while every worker is busy (ms; busy calls: spin ${p.busyMs} ms)`,
      columns: ['server', 'pings', 'answered while busy', 'p50', 'p99', 'max', 'busy calls took'],
      rows,
    };
    const ours = summarize(rtts(labels[0]!));
    const aLabel = specLabel(SPECS.find((s) => s.kind === 'main-thread')!);
    const a = summarize(rtts(aLabel));
    const aDuring = pings.filter((x) => x.server === aLabel && x.answeredWhileBusy).length;
    const targets: Target[] = [
      {
        name: 'Ping p99 with all workers busy (stdio)',
        goal: '< 10 ms',
        measured: `${fmt(ours.p99)} ms`,
        met: ours.p99 < 10,
      },
      {
        name: '(a) blocked for the whole tool run',
        goal: 'no ping answered while busy',
        measured: `${aDuring} of ${a.n} answered while busy; p99 ${fmt(a.p99)} ms, max ${fmt(a.max)} ms`,
        met: aDuring === 0,
      },
    ];
    return {
      id: this.id,
      title: this.title,
      method: [
        `Ours runs ${THREADS} worker threads and gets ${THREADS} busy calls (and, to show the effect of oversubscribing the cores, once more with 1 thread and 1 busy call); (a) and (a') get one (their main thread is their only worker). Busy calls are spin(${p.busyMs} ms, ${STAGE_MS} ms stages), no progress token. 20 ms after sending them, the client sends a ping every ${PING_EVERY_MS} ms without waiting for answers, until the busy calls are answered; RTT = ping sent → pong received. "Answered while busy" counts pongs received before the last busy call's response. ${p.rounds} rounds, servers alternating.`,
        `On 2 cores, ours has ${THREADS} spinning workers, its main thread and the client process competing for CPU: the ping time includes waiting for the OS scheduler.`,
      ].join('\n'),
      params: { threads: THREADS, pingEveryMs: PING_EVERY_MS, stageMs: STAGE_MS, ...p },
      servers: SPECS.map(serverInfo),
      tables: [table],
      headline: { ...table, title: 'Ping while busy (ms)' },
      charts: [
        {
          file: 'ping-busy-cdf',
          title: 'Ping round trip while every worker is busy',
          spec: cdfChart(
            'Ping round trip while every worker is busy',
            labels.map((label) => ({ label, values: rtts(label) })),
          ),
        },
      ],
      targets,
      samples: { pings, busyCalls },
    };
  },
};
