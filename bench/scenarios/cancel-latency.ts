/**
 * Scenario 1: cancel → stopped and cancel → slot reused, for stage sizes 0.1,
 * 1 and 10 ms, over stdio and Streamable HTTP, cooperative and hard stop,
 * against the baselines. Every server has one worker (or its main thread).
 *
 * One sample: make sure the server is idle with a live worker (a zero-work
 * call), start a long call A, wait until it surely runs, then either
 *  - "reused": send a zero-work call B (it queues behind A), cancel A, and
 *    time cancel sent → B's response received; or
 *  - "stopped": cancel A and poll the server's counters until A's work is
 *    reported stopped; time cancel sent → the first poll that sees it.
 * Modes alternate sample by sample, and configurations round-robin.
 */
import { cdfChart, logDotChart } from '#dist/src/probe/charts.js';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { rng } from '../lib/rng.js';
import { A_MS, GRACE_MS, LEAD_MS, WARM_CALLS } from '../lib/sample-timing.js';
import {
  type Connection,
  specLabel,
  type ServerKind,
  type ServerSpec,
  type TransportKind,
  withConnections,
} from '../lib/servers.js';
import { alternate, fmt, sleep, summarize, us, type Summary } from '#dist/src/probe/stats.js';

const STAGES = [0.1, 1, 10] as const;
/** Quick (a smoke run): the 1 ms stages only, every server and mode still present. */
const stagesOf = (quick: boolean): readonly number[] => (quick ? [1] : STAGES);
/** Zero-work calls before each sample; quick: fewer (on a loaded machine each is a slow round trip, and the run has 70 samples). */
const warmCalls = (quick: boolean): number => (quick ? 3 : WARM_CALLS);

/** Ours, after a hard stop: time for the terminated thread's replacement to start before the next sample. */
const REPLACE_MS = 300;

type Mode = 'reused' | 'stopped';
/** `idle`: the zero-work call that opens a "reused" sample, on an idle server: the floor under "reused". */
type Measure = Mode | 'idle';

interface Config {
  readonly key: string;
  readonly spec: ServerSpec;
  readonly stageMs: number;
  readonly cooperative: boolean;
  readonly modes: readonly Mode[];
  readonly samples: number;
  /** Rough time one sample takes, for the progress bar. */
  readonly estimateMs: number;
}

interface Sample {
  readonly config: string;
  readonly mode: Measure;
  readonly ms: number;
}

function configs(quick: boolean): Config[] {
  const ours = (transport: TransportKind): ServerSpec => ({ kind: 'ours', transport, threads: 1, graceMs: GRACE_MS });
  /** Ours with no standby thread: the next call waits for the stopped one to reach a boundary (or to be hard-stopped and replaced). */
  const strict: ServerSpec = {
    kind: 'ours',
    transport: 'stdio',
    threads: 1,
    graceMs: GRACE_MS,
    spareThreads: 0,
    tag: 'no standby',
  };
  const base = (kind: ServerKind): ServerSpec => ({ kind, transport: 'stdio', threads: 1 });
  const out: Config[] = [];
  const both: Mode[] = ['reused', 'stopped'];
  for (const transport of ['stdio', 'http'] as const) {
    for (const stageMs of stagesOf(quick)) {
      out.push({
        key: `ours-${transport}-${stageMs}-coop`,
        spec: ours(transport),
        stageMs,
        cooperative: true,
        modes: both,
        samples: quick ? 8 : 300,
        estimateMs: transport === 'http' ? 45 : 35,
      });
      out.push({
        key: `ours-${transport}-${stageMs}-hard`,
        spec: ours(transport),
        stageMs,
        cooperative: false,
        modes: both,
        samples: quick ? 2 : 20,
        estimateMs: 350,
      });
    }
  }
  // 2026-07-28: a 2.x client in modern mode. stdio cancels with notifications/cancelled; over HTTP the abort closes A's stream.
  for (const transport of ['stdio', 'http'] as const) {
    out.push({
      key: `ours-${transport}-2026-1-coop`,
      spec: { ...ours(transport), era: '2026' },
      stageMs: 1,
      cooperative: true,
      modes: ['reused'],
      samples: quick ? 12 : 300,
      estimateMs: transport === 'http' ? 45 : 35,
    });
    out.push({
      key: `sdk2-piscina-${transport}-2026-1`,
      spec: { kind: 'sdk2-piscina', transport, threads: 1, era: '2026' },
      stageMs: 1,
      cooperative: true,
      modes: ['reused'],
      samples: quick ? 6 : 100,
      estimateMs: 70,
    });
  }
  for (const stageMs of stagesOf(quick))
    out.push({
      key: `strict-stdio-${stageMs}-coop`,
      spec: strict,
      stageMs,
      cooperative: true,
      modes: ['reused'],
      samples: quick ? 4 : 150,
      estimateMs: 35,
    });
  out.push({
    key: 'strict-stdio-1-hard',
    spec: strict,
    stageMs: 1,
    cooperative: false,
    modes: ['reused'],
    samples: quick ? 1 : 10,
    estimateMs: 350,
  });
  for (const stageMs of stagesOf(quick))
    out.push({
      key: `piscina-${stageMs}`,
      spec: base('piscina-abort'),
      stageMs,
      cooperative: true,
      modes: both,
      samples: quick ? 4 : 100,
      estimateMs: 70,
    });
  out.push({
    key: 'workerpool-1',
    spec: base('workerpool'),
    stageMs: 1,
    cooperative: true,
    modes: both,
    samples: quick ? 1 : 8,
    estimateMs: 2100,
  });
  out.push({
    key: 'main-thread-1',
    spec: base('main-thread'),
    stageMs: 1,
    cooperative: true,
    modes: both,
    samples: quick ? 1 : 6,
    estimateMs: 3100,
  });
  // Yielding between slices interleaves B with A on the one thread: there is no slot to reuse, only "stopped".
  out.push({
    key: 'main-thread-yield-1',
    spec: base('main-thread-yield'),
    stageMs: 1,
    cooperative: true,
    modes: ['stopped'],
    samples: quick ? 4 : 30,
    estimateMs: 35,
  });
  return out;
}

function configLabel(c: Config): string {
  const label = specLabel(c.spec);
  return c.spec.kind === 'ours'
    ? `${label}, ${c.cooperative ? 'cooperative' : `hard stop (grace ${GRACE_MS} ms)`}`
    : label;
}

/** How long "cancel → stopped" may wait for the server to report A stopped; past it the sample is counted as never stopped, not timed. */
const STOP_WAIT_MS = 15_000;

async function sample(
  conn: Connection,
  c: Config,
  mode: Mode,
  random: () => number,
  warm: number,
): Promise<{ ms: number; idleMs: number } | 'never-stopped'> {
  // A hard stop or a baseline's cancel replaced the worker in the previous sample: heat the new one
  // (JIT, lazy paths) so that A, B and the idle call do not pay for a cold worker. Only the last call is timed.
  for (let i = 1; i < warm; i++) await conn.warm();
  const w0 = performance.now();
  await conn.warm();
  const idleMs = performance.now() - w0;
  const before = mode === 'stopped' ? await conn.stoppedCount() : 0;
  const controller = new AbortController();
  const a = conn
    .callSpin({ ms: A_MS, stageMs: c.stageMs, cooperative: c.cooperative }, { signal: controller.signal })
    .catch(() => undefined);
  await sleep(LEAD_MS + random() * Math.max(2, 2 * c.stageMs));
  let b: Promise<unknown> | undefined;
  if (mode === 'reused') {
    b = conn.callSpin({ ms: 0 });
    await sleep(2); // B is queued at the server before the cancel is sent
  }
  const t0 = performance.now();
  controller.abort();
  if (b) await b;
  else {
    // Bounded: a server whose stop counter never moves (a baseline whose worker crashed, say) must not hang the run.
    while ((await conn.stoppedCount()) <= before) if (performance.now() - t0 > STOP_WAIT_MS) return 'never-stopped';
  }
  const elapsed = performance.now() - t0;
  await a;
  // A hard stop terminated A's thread; ours keeps serving on the standby thread meanwhile, but the next
  // sample should start with every thread back, as a cooperative one does.
  if (!c.cooperative && c.spec.kind === 'ours') await sleep(REPLACE_MS);
  return { ms: elapsed, idleMs };
}

export const cancelLatency: Scenario = {
  id: 'cancel-latency',
  title: '1. Cancel → stopped and cancel → slot reused',
  estimateMs: (quick) => configs(quick).reduce((n, c) => n + c.samples * c.estimateMs, 0),

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const wanted = ctx.rows;
    const all = configs(ctx.quick).filter((c) => !wanted || wanted.includes(c.key));
    if (all.length === 0)
      throw new Error(
        `--rows names no configuration of cancel-latency: ${configs(ctx.quick)
          .map((c) => c.key)
          .join(', ')}`,
      );
    const specs = [...new Map(all.map((c) => [JSON.stringify(c.spec), c.spec])).values()];
    const samples: Sample[] = [];
    const neverStopped = new Map<string, number>();
    const late = await withConnections(specs, async (conns) => {
      const index = new Map(specs.map((s, i) => [JSON.stringify(s), i]));
      const connOf = (c: Config) => conns[index.get(JSON.stringify(c.spec))!]!;
      const random = rng(1);
      await alternate(
        all,
        (c) => c.samples,
        async (c, round) => {
          const mode = c.modes[round % c.modes.length]!;
          const r = await sample(connOf(c), c, mode, random, warmCalls(ctx.quick));
          if (r === 'never-stopped') {
            neverStopped.set(c.key, (neverStopped.get(c.key) ?? 0) + 1);
            return ctx.progress.tick(c.estimateMs);
          }
          samples.push({ config: c.key, mode, ms: us(r.ms) });
          if (mode === 'reused') samples.push({ config: c.key, mode: 'idle', ms: us(r.idleMs) });
          ctx.progress.tick(c.estimateMs);
        },
      );
      return Object.fromEntries(conns.map((c) => [c.label, c.lateResponses]));
    });

    const of = (key: string, mode: Measure) =>
      samples.filter((s) => s.config === key && s.mode === mode).map((s) => s.ms);
    const stats = new Map<string, Summary>();
    const rows: (string | number)[][] = [];
    const measureName: Record<Measure, string> = {
      reused: 'cancel → slot reused',
      stopped: 'cancel → stopped',
      idle: 'zero-work call, idle server',
    };
    for (const c of all) {
      for (const mode of [...c.modes, ...(c.modes.includes('reused') ? (['idle'] as const) : [])]) {
        const s = summarize(of(c.key, mode));
        stats.set(`${c.key}/${mode}`, s);
        rows.push([
          configLabel(c),
          String(c.stageMs),
          measureName[mode],
          s.n,
          fmt(s.p50),
          fmt(s.p90),
          fmt(s.p99),
          fmt(s.max),
        ]);
      }
    }
    const tables: Table[] = [
      {
        title: 'Latency after a cancellation (ms)',
        columns: ['server', 'stage ms', 'measure', 'n', 'p50', 'p90', 'p99', 'max'],
        rows,
        note:
          `Late responses (answers the client got for calls it had cancelled): ${Object.entries(late)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')}.` +
          (neverStopped.size
            ? ` Samples not reported stopped within ${STOP_WAIT_MS} ms of the cancel (left out of the table): ${[...neverStopped].map(([k, v]) => `${k}: ${v}`).join(', ')}.`
            : ''),
      },
    ];

    // A chart only where some row has samples (a --rows run leaves some stage sizes and modes without any).
    const charted = (stageMs: number, mode: Mode) => all.some((c) => c.stageMs === stageMs && c.modes.includes(mode));
    const charts = STAGES.flatMap((stageMs) =>
      (['reused', 'stopped'] as const)
        .filter((mode) => charted(stageMs, mode))
        .map((mode) => ({
          file: `cancel-${mode}-${String(stageMs).replace('.', '_')}ms`,
          title: `Cancel → ${mode === 'reused' ? 'slot reused' : 'stopped'}, ${stageMs} ms stages`,
          spec: cdfChart(
            `Cancel → ${mode === 'reused' ? 'slot reused (next call answered)' : 'stopped'}, ${stageMs} ms stages`,
            all
              .filter((c) => c.stageMs === stageMs && c.modes.includes(mode))
              .map((c) => ({ label: configLabel(c), values: of(c.key, mode) })),
          ),
        })),
    );
    charts.push({
      file: 'cancel-reused-p50-bars',
      title: 'Cancel → slot reused, p50 by stage size',
      spec: logDotChart(
        'Cancel → slot reused, p50 (ms, log scale)',
        all
          .filter((c) => c.modes.includes('reused'))
          .map((c) => ({ group: `${c.stageMs} ms`, series: configLabel(c), value: stats.get(`${c.key}/reused`)!.p50 })),
        'p50 (ms)',
        'stage size',
      ),
    });

    // Each target needs its rows (a --rows run may have left them out).
    const reused = (key: string) => stats.get(`${key}/reused`);
    const targets: Target[] = [];
    const ours = reused('ours-stdio-1-coop');
    const pis = reused('piscina-1');
    const strictStats = reused('strict-stdio-1-coop');
    if (ours) {
      targets.push({
        name: 'Cancel → slot reused, 1 ms stages, stdio: p50',
        goal: '≤ 2 ms',
        measured: `${fmt(ours.p50)} ms`,
        met: ours.p50 <= 2,
      });
      targets.push({
        name: 'Cancel → slot reused, 1 ms stages, stdio: p99',
        goal: '≤ 5 ms',
        measured: `${fmt(ours.p99)} ms`,
        met: ours.p99 <= 5,
      });
    }
    if (ours && pis)
      targets.push({
        name: 'Cancel → slot reused, 1 ms stages, stdio: p50 vs (b)',
        goal: '≥ 25× faster',
        measured: `${(pis.p50 / ours.p50).toFixed(1)}× (${fmt(pis.p50)} / ${fmt(ours.p50)} ms)`,
        met: pis.p50 / ours.p50 >= 25,
      });
    if (strictStats && pis) {
      targets.push({
        name: 'The same with `--spare-threads 0` (for comparison: no standby thread)',
        goal: '≥ 25× faster',
        measured: `${(pis.p50 / strictStats.p50).toFixed(1)}× (${fmt(pis.p50)} / ${fmt(strictStats.p50)} ms; p99 ${fmt(strictStats.p99)} ms)`,
        met: pis.p50 / strictStats.p50 >= 25,
      });
    }
    for (const transport of ['stdio', 'http'] as const) {
      const modern = reused(`ours-${transport}-2026-1-coop`);
      const f = reused(`sdk2-piscina-${transport}-2026-1`);
      if (modern && f) {
        targets.push({
          name: `Cancel → slot reused, 1 ms stages, 2026 ${transport === 'http' ? 'HTTP (closed stream)' : 'stdio'}: p50 vs (f)`,
          goal: '≥ 25× faster',
          measured: `${(f.p50 / modern.p50).toFixed(1)}× (${fmt(f.p50)} / ${fmt(modern.p50)} ms; ours p99 ${fmt(modern.p99)} ms)`,
          met: f.p50 / modern.p50 >= 25,
        });
      }
    }
    // Issue 53: over HTTP a cancel costs what it costs over stdio, give or take half (the same SDK client and era).
    const httpModern = reused('ours-http-2026-1-coop');
    const stdioModern = reused('ours-stdio-2026-1-coop');
    if (httpModern && stdioModern) {
      const x = httpModern.p50 / stdioModern.p50;
      targets.push({
        name: 'Cancel → slot reused, 1 ms stages, 2026 HTTP (closed stream): p50 vs ours over stdio',
        goal: '≤ 1.5×',
        measured: `${x.toFixed(2)}× (${fmt(httpModern.p50)} / ${fmt(stdioModern.p50)} ms)`,
        met: x <= 1.5,
      });
    }

    const headKeys = [
      'ours-stdio-1-coop',
      'ours-http-1-coop',
      'ours-stdio-2026-1-coop',
      'ours-http-2026-1-coop',
      'ours-stdio-1-hard',
      'strict-stdio-1-coop',
      'strict-stdio-1-hard',
      'piscina-1',
      'sdk2-piscina-stdio-2026-1',
      'sdk2-piscina-http-2026-1',
      'workerpool-1',
      'main-thread-1',
    ];
    const headline: Table = {
      title: 'Cancel → slot reused, 1 ms stages (ms)',
      columns: ['server', 'n', 'p50', 'p99', 'max'],
      rows: all
        .filter((c) => headKeys.includes(c.key))
        .map((c) => {
          const s = stats.get(`${c.key}/reused`)!;
          return [configLabel(c), s.n, fmt(s.p50), fmt(s.p99), fmt(s.max)];
        }),
    };

    return {
      id: this.id,
      headline,
      title: this.title,
      method: [
        `Each server runs with one worker thread (the main-thread baselines with their one thread). One sample: ${warmCalls(ctx.quick)} zero-work calls one after another, so the server is idle with a live, warmed-up worker (the previous sample may have replaced it); a call A = spin(${A_MS} ms, stage s) that is cancelled ${LEAD_MS} ms + a random 0–max(2, 2s) ms after it was sent (the SDK client aborts it, which sends \`notifications/cancelled\`).`,
        "- **cancel → slot reused**: a zero-work call B is sent 2 ms before the cancellation and queues behind A; the time is from sending the cancellation to receiving B's response. It includes stopping A, handing the worker to B, B's (zero) work and B's response on the wire.",
        '- **zero-work call, idle server**: the round trip of the last of those zero-work calls, timed in the "reused" samples; it is the floor under "cancel → slot reused", which contains one such call (B).',
        "- **cancel → stopped**: the client polls the server's counters (`executor://stats` `cancelled` − `stopping` for ours, `bench://stats` `stopped` for the baselines) back to back until A is reported stopped; the time is from sending the cancellation to the first poll that sees it, so it overstates by up to one poll round trip (~0.1–0.5 ms). Ours counts a job when its worker has returned from it (or was terminated): `cancelled` alone counts a cancel when it wins, before the work stops; (a) when its loop has ended; (b) when Piscina destroys the worker (terminate requested); (c) when workerpool reports the worker terminated.",
        '- Ours runs with its default standby thread (`--spare-threads 1`): once the cancellation of A is accepted, B starts at once on the standby thread while A winds down to its next boundary (or, in the hard-stop rows, until its grace period ends). The "no standby" rows run `--spare-threads 0`, where B waits for A\'s thread.',
        `- After a hard-stop sample, ours gets ${REPLACE_MS} ms for the replacement thread to start before the next sample (calls are served by the other thread meanwhile).`,
        `- Ours runs with \`--grace-ms ${GRACE_MS}\` (the default is 1000): in the hard-stop rows (\`cooperative: false\`, the tool never checks) a stopped call's worker is terminated after that grace and replaced.`,
        '- (b) and (c) have no cooperative path, so their rows are the same whatever `cooperative` says; (a) and (c) are sampled less because each sample takes seconds.',
        `- (a') yields to the event loop before every slice, so B runs interleaved with A and there is no slot to reuse: only "stopped" is measured.`,
        '- The "2026" rows speak 2026-07-28 with the SDK 2.x client pinned to it (no `initialize`; each request carries its envelope). Its abort sends `notifications/cancelled` over stdio, and over Streamable HTTP closes A\'s response stream, which is that revision\'s cancellation. (f) is the SDK 2.x `McpServer` (`serveStdio`; over HTTP `createMcpHandler` with `legacy: \'reject\'`) with Piscina, `ctx.mcpReq.signal` passed to `piscina.run`: the 2.x counterpart of (b). Only "slot reused" is measured in these rows.',
      ].join('\n'),
      params: {
        stages: stagesOf(ctx.quick),
        aMs: A_MS,
        leadMs: LEAD_MS,
        graceMs: GRACE_MS,
        configs: all.map((c) => ({
          key: c.key,
          label: configLabel(c),
          stageMs: c.stageMs,
          cooperative: c.cooperative,
          samples: c.samples,
        })),
      },
      servers: specs.map(serverInfo),
      tables,
      charts,
      targets,
      samples: { lateResponses: late, samples },
    };
  },
};
