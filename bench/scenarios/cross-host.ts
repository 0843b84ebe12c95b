/**
 * Scenario 5: many hosts. A front end (`serve --redis`, stdio) and worker
 * hosts (`worker`, with and without `--tool-priority idle`) on a private
 * redis-server, against (d) a plain BullMQ
 * worker with BullMQ's AbortSignal and a pub/sub cancel relay, in the same run:
 *  - cancel → slot reused and cancel → stopped on a remote host (1 ms stages);
 *  - useful throughput of CPU-bound 50 ms calls with one and with two worker hosts;
 *  - zero-work overhead per call against the local pool.
 */
import { cdfChart } from '#dist/src/probe/charts.js';
import { statCpuMs } from '#dist/src/probe/cpu.js';
import { alternate, fmt, sleep, summarize, us, type Summary } from '#dist/src/probe/stats.js';
import { startBaselineWorker, startBenchRedis, startWorkerHost, type Proc } from '../lib/redis.js';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { rng } from '../lib/rng.js';
import { type Connection, type ServerSpec, withConnections } from '../lib/servers.js';

const OURS_Q = 'bench-ours';
/** The same, with the host's tool threads in SCHED_IDLE (`worker --tool-priority idle`). */
const IDLE_Q = 'bench-ours-idle';
const D_Q = 'bench-d';
const A_MS = 3000;
const LEAD_MS = 15;
const WARM_CALLS = 5;
const STAGE_MS = 1;
const TP_CALL_MS = 50;
/** Calls kept in flight in the throughput windows: more than two hosts' one thread each can run. */
const TP_IN_FLIGHT = 6;
/** Throughput windows: one host, two hosts, one host with `--tool-priority idle`. */
const TP_CONFIGS = ['1', '2', '1 idle'] as const;
type TpConfig = (typeof TP_CONFIGS)[number];

type Mode = 'reused' | 'stopped';
type Server = 'ours' | 'idle' | 'd';
const OURS_SERVERS = ['ours', 'idle'] as const;
interface Sample {
  readonly server: Server;
  readonly mode: Mode;
  readonly ms: number;
}

function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return Number.NaN;
  }
}

export const crossHost: Scenario = {
  id: 'cross-host',
  title: '5. Many hosts: cancel across hosts, throughput with one and two worker hosts, overhead per call',
  estimateMs: (quick) => (quick ? 20_000 : 180_000),

  async run(ctx: RunContext): Promise<ScenarioResult> {
    // 400 per server and measure: a p99 of 200 is the second-worst sample, too noisy for a ratio target.
    // Quick: a smoke run of every measure (its host start-ups are most of its time), not figures to quote.
    const samplesPer = ctx.quick ? 4 : 400;
    const overheadCalls = ctx.quick ? 20 : 400;
    const windowMs = ctx.quick ? 600 : 8000;
    const tpRounds = ctx.quick ? 1 : 2;
    const redis = await startBenchRedis();
    const procs: Proc[] = [];
    try {
      // The three worker sides start at once; each pushed as it comes up, so a failure still stops the others.
      const started = await Promise.allSettled([
        startWorkerHost(redis.url, OURS_Q),
        startWorkerHost(redis.url, IDLE_Q, ['--tool-priority', 'idle']),
        startBaselineWorker(redis.url, D_Q),
      ]);
      for (const r of started) if (r.status === 'fulfilled') procs.push(r.value);
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      const [hostA, hostI] = procs as [Proc, Proc, Proc];
      const hostKey = { ours: `mcp:${OURS_Q}:host:${hostA.match[1]!}`, idle: `mcp:${IDLE_Q}:host:${hostI.match[1]!}` };
      const oursSpec: ServerSpec = {
        kind: 'ours',
        transport: 'stdio',
        threads: 1,
        redis: redis.url,
        queue: OURS_Q,
        tag: 'serve --redis, worker hosts',
      };
      const idleSpec: ServerSpec = {
        kind: 'ours',
        transport: 'stdio',
        threads: 1,
        redis: redis.url,
        queue: IDLE_Q,
        tag: 'serve --redis, worker host --tool-priority idle',
      };
      const dSpec: ServerSpec = { kind: 'bullmq', transport: 'stdio', threads: 1, redis: redis.url, queue: D_Q };
      const localSpec: ServerSpec = { kind: 'ours', transport: 'stdio', threads: 1, tag: 'local pool' };
      const specs = [oursSpec, idleSpec, dSpec, localSpec];
      const result = await withConnections(specs, async ([ours, idle, d, local]) => {
        // The front end may have answered the warm-up before Redis was up (a tool error): wait until calls go through.
        for (const front of [ours!, idle!])
          for (let i = 0; i < 100 && (await front.callSpin({ ms: 0 })).isError; i++) await sleep(100);
        const stoppedOf = async (server: Server): Promise<number> => {
          if (server === 'd') return Number((await redis.client.get(`${D_Q}:stopped`)) ?? 0);
          const text = await redis.client.get(hostKey[server]);
          return text ? ((JSON.parse(text) as { stopped?: number }).stopped ?? 0) : 0;
        };

        // 1. Cancel → slot reused / stopped, ours and (d) alternating sample by sample.
        const samples: Sample[] = [];
        const random = rng(5);
        /** Whether A is on the worker side now (ours: the host's live counters; (d): BullMQ's active list). */
        const runningOn = async (server: Server): Promise<boolean> => {
          if (server === 'd') return (await redis.client.llen(`bull:${D_Q}:active`)) > 0;
          const text = await redis.client.get(hostKey[server]);
          return text ? ((JSON.parse(text) as { active?: number }).active ?? 0) > 0 : false;
        };
        /** Polls back to back; a sample that would hang fails the run with a message instead. */
        const poll = async (check: () => Promise<boolean>, what: string) => {
          const end = performance.now() + 10_000;
          while (!(await check()))
            if (performance.now() > end) throw new Error(`cross-host: ${what} not seen within 10 s`);
        };
        const sample = async (conn: Connection, server: Server, mode: Mode): Promise<void> => {
          for (let i = 0; i < WARM_CALLS; i++) await conn.warm();
          const before = mode === 'stopped' ? await stoppedOf(server) : 0;
          const controller = new AbortController();
          const a = conn
            .callSpin({ ms: A_MS, stageMs: STAGE_MS }, { signal: controller.signal })
            .catch(() => undefined);
          await sleep(LEAD_MS + random() * 2);
          // On a busy machine A may still wait in the queue after the lead: cancel it only once a worker side runs it.
          await poll(() => runningOn(server), `A running on ${server}`);
          let b: Promise<unknown> | undefined;
          if (mode === 'reused') {
            b = conn.callSpin({ ms: 0 });
            await sleep(2);
          }
          const t0 = performance.now();
          controller.abort();
          if (b) await b;
          else await poll(async () => (await stoppedOf(server)) > before, `A stopped on ${server}`);
          samples.push({ server, mode, ms: us(performance.now() - t0) });
          await a;
          ctx.progress.tick(100);
        };
        const pairs: { conn: Connection; server: Server }[] = [
          { conn: ours!, server: 'ours' },
          { conn: idle!, server: 'idle' },
          { conn: d!, server: 'd' },
        ];
        await alternate(
          pairs,
          () => 2 * samplesPer,
          (p, round) => sample(p.conn, p.server, round % 2 ? 'stopped' : 'reused'),
        );

        // 2. Zero-work overhead per call: the local pool vs through Redis to one worker host, alternating.
        const overhead: { server: 'local' | 'remote'; ms: number }[] = [];
        const conns = [
          { conn: local!, server: 'local' as const },
          { conn: ours!, server: 'remote' as const },
        ];
        await alternate(
          conns,
          () => overheadCalls,
          async (c) => {
            const t0 = performance.now();
            await c.conn.callSpin({ ms: 0 });
            overhead.push({ server: c.server, ms: us(performance.now() - t0) });
          },
        );
        ctx.progress.tick(10_000);

        // 3. Useful throughput, CPU-bound 50 ms calls, with one and with two worker hosts (each one thread),
        //    and with the one host whose tool threads are SCHED_IDLE.
        const windows: {
          hosts: TpConfig;
          round: number;
          completed: number;
          perSecond: number;
          cpu: Record<string, number>;
        }[] = [];
        for (let round = 0; round < tpRounds; round++) {
          for (const hosts of TP_CONFIGS) {
            const hostB = hosts === '2' ? await startWorkerHost(redis.url, OURS_Q) : undefined;
            if (hostB) procs.push(hostB);
            const front = hosts === '1 idle' ? idle! : ours!;
            await sleep(300);
            const pids: Record<string, number | undefined> = {
              'front end': front.pid,
              'host 1': (hosts === '1 idle' ? hostI : hostA).child.pid,
              ...(hostB && { 'host 2': hostB.child.pid }),
              redis: redis.pid,
            };
            const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
            let completed = 0;
            const end = performance.now() + windowMs;
            const t0 = performance.now();
            await Promise.all(
              Array.from({ length: TP_IN_FLIGHT }, async () => {
                while (performance.now() < end) {
                  const r = await front.callSpin({ ms: TP_CALL_MS, stageMs: STAGE_MS });
                  if (!r.isError && performance.now() <= end) completed++;
                }
              }),
            );
            const elapsed = performance.now() - t0;
            const cpu = Object.fromEntries(
              Object.entries(pids).map(([k, pid]) => [k, Math.round(((cpuMs(pid) - cpu0[k]!) / elapsed) * 100)]),
            );
            windows.push({ hosts, round, completed, perSecond: completed / (windowMs / 1000), cpu });
            if (hostB) {
              await hostB.stop();
              procs.splice(procs.indexOf(hostB), 1);
            }
            ctx.progress.tick(windowMs + 1000);
          }
        }
        return {
          samples,
          overhead,
          windows,
          late: { ours: ours!.lateResponses, idle: idle!.lateResponses, d: d!.lateResponses },
        };
      });

      const of = (server: Server, mode: Mode) =>
        result.samples.filter((s) => s.server === server && s.mode === mode).map((s) => s.ms);
      const st: Record<string, Summary> = {};
      for (const server of ['ours', 'idle', 'd'] as const)
        for (const mode of ['reused', 'stopped'] as const) st[`${server}/${mode}`] = summarize(of(server, mode));
      const label = {
        ours: 'ours (serve --redis → worker host)',
        idle: 'ours, worker host --tool-priority idle',
        d: '(d) plain BullMQ + AbortSignal + pub/sub',
      };
      const latencyRows = (['reused', 'stopped'] as const).flatMap((mode) =>
        (['ours', 'idle', 'd'] as const).map((server) => {
          const s = st[`${server}/${mode}`]!;
          return [
            label[server],
            mode === 'reused' ? 'cancel → slot reused' : 'cancel → stopped',
            s.n,
            fmt(s.p50),
            fmt(s.p90),
            fmt(s.p99),
            fmt(s.max),
          ];
        }),
      );
      const oh = (server: 'local' | 'remote') =>
        summarize(result.overhead.filter((o) => o.server === server).map((o) => o.ms));
      const ohLocal = oh('local');
      const ohRemote = oh('remote');
      const tp = (hosts: TpConfig) => result.windows.filter((w) => w.hosts === hosts);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const tp1 = mean(tp('1').map((w) => w.perSecond));
      const tp2 = mean(tp('2').map((w) => w.perSecond));
      const tpIdle = mean(tp('1 idle').map((w) => w.perSecond));
      const cpuText = (hosts: TpConfig) => {
        const ws = tp(hosts);
        const keys = Object.keys(ws[0]?.cpu ?? {});
        return keys.map((k) => `${k} ${Math.round(mean(ws.map((w) => w.cpu[k]!)))}%`).join(', ');
      };
      const tables: Table[] = [
        {
          title: 'Cancel on a remote host, 1 ms stages, stdio at the front end (ms)',
          columns: ['server', 'measure', 'n', 'p50', 'p90', 'p99', 'max'],
          rows: latencyRows,
          note: `Late responses (answers for cancelled calls): ours ${result.late.ours}, ours idle ${result.late.idle}, (d) ${result.late.d}.`,
        },
        {
          title: `Useful throughput, spin(${TP_CALL_MS} ms) calls, ${TP_IN_FLIGHT} in flight`,
          columns: ['worker hosts (1 thread each)', 'windows', 'calls/s', 'CPU per process (% of one core)'],
          rows: TP_CONFIGS.map((h) => [
            h === '1 idle' ? '1, --tool-priority idle' : h,
            tp(h).length,
            tp(h)
              .map((w) => w.perSecond.toFixed(1))
              .join(' / '),
            cpuText(h),
          ]),
          note: `Two hosts vs one: ${(tp2 / tp1).toFixed(2)}×. One host with idle-class tool threads vs normal: ${(tpIdle / tp1).toFixed(2)}×.`,
        },
        {
          title: 'Zero-work call, sequential (ms)',
          columns: ['backend', 'n', 'p50', 'p90', 'p99', 'max'],
          rows: [
            [
              'local pool (serve --threads 1)',
              ohLocal.n,
              fmt(ohLocal.p50),
              fmt(ohLocal.p90),
              fmt(ohLocal.p99),
              fmt(ohLocal.max),
            ],
            [
              'through Redis to one worker host',
              ohRemote.n,
              fmt(ohRemote.p50),
              fmt(ohRemote.p90),
              fmt(ohRemote.p99),
              fmt(ohRemote.max),
            ],
          ],
          note: `Overhead of the queue per call: p50 +${fmt(ohRemote.p50 - ohLocal.p50)} ms, p99 +${fmt(ohRemote.p99 - ohLocal.p99)} ms.`,
        },
      ];
      const dd = st['d/reused']!;
      const latencyTargets = (server: 'ours' | 'idle'): Target[] => {
        const o = st[`${server}/reused`]!;
        const who = server === 'ours' ? 'Cross-host cancel → slot reused' : '… with --tool-priority idle';
        return [
          { name: `${who}: p50`, goal: '≤ 3 ms', measured: `${fmt(o.p50)} ms`, met: o.p50 <= 3 },
          { name: `${who}: p99`, goal: '≤ 10 ms', measured: `${fmt(o.p99)} ms`, met: o.p99 <= 10 },
          {
            name: `${who} vs (d): p50`,
            goal: 'not slower',
            measured: `${(dd.p50 / o.p50).toFixed(2)}× (${fmt(dd.p50)} / ${fmt(o.p50)} ms)`,
            met: o.p50 <= dd.p50,
          },
          {
            name: `${who} vs (d): p99`,
            goal: 'not slower',
            measured: `${(dd.p99 / o.p99).toFixed(2)}× (${fmt(dd.p99)} / ${fmt(o.p99)} ms)`,
            met: o.p99 <= dd.p99,
          },
        ];
      };
      const targets: Target[] = [
        ...OURS_SERVERS.flatMap(latencyTargets),
        {
          name: `Two worker hosts vs one, spin(${TP_CALL_MS} ms)`,
          goal: '≥ 1.6×',
          measured: `${(tp2 / tp1).toFixed(2)}× (${tp2.toFixed(1)} / ${tp1.toFixed(1)} calls/s; CPU with two: ${cpuText('2')})`,
          met: tp2 / tp1 >= 1.6,
        },
      ];
      return {
        id: this.id,
        title: this.title,
        headline: {
          title: 'Cross-host, 1 ms stages (ms)',
          columns: ['server', 'measure', 'n', 'p50', 'p90', 'p99', 'max'],
          rows: latencyRows,
        },
        method: [
          `A private redis-server; one worker host (\`mcp-cancel-pool worker --threads 1\`, its default standby thread) behind a front end (\`serve --redis\`, stdio), and the same pair on a second queue with the host's tool threads in SCHED_IDLE (\`worker --tool-priority idle\`: the host's main thread preempts a spinning tool at once); (d) is an SDK server that puts each call on a BullMQ queue and waits with QueueEvents, and a plain BullMQ Worker (concurrency 1) whose processor runs the same spin loop on its main thread, yielding between slices so BullMQ's AbortSignal can fire, with a pub/sub subscriber calling \`worker.cancelJob\`. The three alternate sample by sample.`,
          `- One sample: ${WARM_CALLS} zero-work calls, then A = spin(${A_MS} ms, ${STAGE_MS} ms stages), cancelled ${LEAD_MS} ms + 0–2 ms after it was sent, and only once the worker side runs it (polled in Redis: the host's live counters for ours, BullMQ's active list for (d)); the SDK client aborts it, which sends \`notifications/cancelled\`.`,
          "- **cancel → slot reused**: a zero-work call B is sent 2 ms before the cancellation and waits behind A (each worker side runs one job at a time); time from the cancellation to B's response.",
          "- **cancel → stopped**: time from the cancellation until the worker side reports A's work stopped, read back to back from Redis (ours: the host's liveness key, whose `stopped` counter is written the moment a cancelled job's thread returns; (d): a counter its processor increments when it leaves on the abort).",
          `- **throughput**: ${TP_IN_FLIGHT} spin(${TP_CALL_MS} ms) calls kept in flight for ${windowMs / 1000} s, with one worker host, then two (one thread each), then the one host with \`--tool-priority idle\`; calls answered per second, and each process's CPU over the window.`,
          `- **overhead**: ${overheadCalls} sequential zero-work calls each, alternating between the local pool (\`serve --threads 1\`) and the front end with one worker host.`,
        ].join('\n'),
        params: {
          aMs: A_MS,
          leadMs: LEAD_MS,
          stageMs: STAGE_MS,
          samplesPer,
          overheadCalls,
          windowMs,
          tpRounds,
          tpCallMs: TP_CALL_MS,
          tpInFlight: TP_IN_FLIGHT,
        },
        servers: specs.map(serverInfo),
        tables,
        charts: (['reused', 'stopped'] as const).map((mode) => ({
          file: `cross-host-${mode}`,
          title: `Cross-host cancel → ${mode === 'reused' ? 'slot reused' : 'stopped'}, 1 ms stages`,
          spec: cdfChart(
            `Cross-host cancel → ${mode === 'reused' ? 'slot reused' : 'stopped'}, 1 ms stages`,
            (['ours', 'idle', 'd'] as const).map((s) => ({ label: label[s], values: of(s, mode) })),
          ),
        })),
        targets,
        samples: result,
      };
    } finally {
      for (const p of procs) await p.stop();
      await redis.stop();
    }
  },
};
