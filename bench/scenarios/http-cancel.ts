/**
 * Scenario 9: cancel → slot reused and cancel → stopped over Streamable HTTP,
 * both eras, from the raw keep-alive client: in 2026-07-28 the cancel is a
 * closed response stream (the client destroys the request's socket), in
 * 2025-11-25 a `notifications/cancelled` POST in the call's session. Ours
 * against (f), (g) and (h) fastmcp (2025 only), each with one worker thread.
 * A sample is scenario 1's (bench/scenarios/cancel-latency.ts): a long call
 * A, then either a zero-work call B queued behind it and timed from the
 * cancel to B's answer, or the server's stop counter polled until A is
 * reported stopped. Rows alternate sample by sample.
 */
import type { ClientRequest } from 'node:http';
import { cdfChart } from '#dist/src/probe/charts.js';
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
import { specLabel, type ServerKind, type ServerSpec } from '../lib/servers.js';
import { HttpServer, type LegacySession, uniqueId } from '../lib/http-load.js';
import { alternate, fmt, sleep, summarize, us, type Summary } from '#dist/src/probe/stats.js';
import type { Era } from './http-overhead.js';

type Mode = 'reused' | 'stopped';

/** One timed sample, as `results.json` keeps it (`samples.samples`); `row` is e.g. `ours-2026`, `f-2025` ((f), (g), (h) by letter). */
export interface HttpCancelSample {
  row: string;
  mode: Mode | 'idle';
  ms: number;
}

interface Row {
  readonly key: string;
  readonly kind: ServerKind;
  readonly era: Era;
  readonly samples: number;
  /** Rough time one sample takes, for the progress bar. */
  readonly estimateMs: number;
}

const SPECS: Record<string, ServerSpec> = {
  ours: { kind: 'ours', transport: 'http', threads: 1, graceMs: GRACE_MS },
  'sdk2-piscina': { kind: 'sdk2-piscina', transport: 'http', threads: 1 },
  'sdk2-coop': { kind: 'sdk2-coop', transport: 'http', threads: 1 },
  fastmcp: { kind: 'fastmcp', transport: 'http', threads: 1 },
};
const SHORT: Partial<Record<ServerKind, string>> = {
  ours: 'ours',
  'sdk2-piscina': 'f',
  'sdk2-coop': 'g',
  fastmcp: 'h',
};

function rows(quick: boolean): Row[] {
  const n = (ours: boolean) => (quick ? (ours ? 6 : 4) : ours ? 160 : 60);
  const out: Row[] = [];
  for (const era of ['2026', '2025'] as const) {
    for (const kind of ['ours', 'sdk2-piscina', 'sdk2-coop', 'fastmcp'] as const) {
      if (kind === 'fastmcp' && era === '2026') continue;
      out.push({
        key: `${SHORT[kind]}-${era}`,
        kind,
        era,
        samples: n(kind === 'ours'),
        estimateMs: kind === 'ours' || kind === 'sdk2-coop' ? 60 : 150,
      });
    }
  }
  return out;
}

const rowLabel = (r: Row) =>
  `${specLabel(SPECS[r.kind]!)}, ${r.era === '2026' ? '2026 closed stream' : '2025 cancel POST'}`;

/** How long "cancel → stopped" may wait for the server to report A stopped; past it the sample is counted as never stopped. */
const STOP_WAIT_MS = 15_000;

type Outcome = { ms: number; idleMs: number } | 'never-stopped' | 'failed';

async function sample(
  server: HttpServer,
  session: LegacySession,
  stats: LegacySession,
  row: Row,
  mode: Mode,
  random: () => number,
  warm: number,
): Promise<Outcome> {
  const zero = () => (row.era === '2026' ? server.spin2026({ ms: 0 }) : server.spin2025(session, { ms: 0 }));
  for (let i = 1; i < warm; i++) await zero();
  const w0 = performance.now();
  if (!(await zero())) return 'failed';
  const idleMs = performance.now() - w0;
  const before = mode === 'stopped' ? await server.stoppedCount(stats) : 0;
  let aReq: ClientRequest | undefined;
  const aId = uniqueId();
  const args = { ms: A_MS, stageMs: 1 };
  const hold = (req: ClientRequest) => (aReq = req);
  const a = (row.era === '2026' ? server.spin2026(args, hold) : server.spin2025(session, args, aId, hold)).catch(
    () => false,
  );
  await sleep(LEAD_MS + random() * 2);
  let b: Promise<boolean> | undefined;
  if (mode === 'reused') {
    b = zero().catch(() => false);
    await sleep(2); // B is queued at the server before the cancel is sent
  }
  const t0 = performance.now();
  if (row.era === '2026') aReq!.destroy();
  else await server.cancel2025(session, aId);
  let outcome: Outcome | undefined;
  if (b) {
    if (!(await b)) outcome = 'failed';
  } else {
    while ((await server.stoppedCount(stats)) <= before) {
      if (performance.now() - t0 > STOP_WAIT_MS) {
        outcome = 'never-stopped';
        break;
      }
    }
  }
  const elapsed = performance.now() - t0;
  // A 2025 server that answers nothing for a cancelled call may keep its stream open: the client lets it go.
  aReq?.destroy();
  await a;
  return outcome ?? { ms: elapsed, idleMs };
}

/** Scenario 9 (`--only http-cancel`). */
export const httpCancel: Scenario = {
  id: 'http-cancel',
  title: '9. Cancel → slot reused and cancel → stopped over Streamable HTTP, both eras',
  estimateMs: (quick) => 4000 + rows(quick).reduce((n, r) => n + r.samples * r.estimateMs, 0),

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const all = rows(ctx.quick).filter((r) => !ctx.rows || ctx.rows.includes(r.key));
    if (all.length === 0)
      throw new Error(
        `--rows names no row of http-cancel: ${rows(ctx.quick)
          .map((r) => r.key)
          .join(', ')}`,
      );
    const kinds = [...new Set(all.map((r) => r.kind))];
    const warm = ctx.quick ? 3 : WARM_CALLS;
    const samples: HttpCancelSample[] = [];
    const misses = new Map<string, { neverStopped: number; failed: number }>();
    const servers = new Map<ServerKind, { server: HttpServer; session: LegacySession; stats: LegacySession }>();
    try {
      const opened = await Promise.allSettled(kinds.map((k) => HttpServer.start(SPECS[k]!)));
      const started = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        await Promise.all(started.map((s) => s.close()));
        throw failed.reason;
      }
      for (const server of started)
        servers.set(server.spec.kind, {
          server,
          session: await server.openSession(),
          stats: await server.openSession(),
        });
      ctx.progress.tick(4000);
      const random = rng(9);
      await alternate(
        all,
        (r) => r.samples,
        async (row, round) => {
          const mode: Mode = round % 2 === 0 ? 'reused' : 'stopped';
          const s = servers.get(row.kind)!;
          const r = await sample(s.server, s.session, s.stats, row, mode, random, warm);
          if (r === 'never-stopped' || r === 'failed') {
            const m = misses.get(row.key) ?? { neverStopped: 0, failed: 0 };
            if (r === 'failed') m.failed++;
            else m.neverStopped++;
            misses.set(row.key, m);
          } else {
            samples.push({ row: row.key, mode, ms: us(r.ms) });
            if (mode === 'reused') samples.push({ row: row.key, mode: 'idle', ms: us(r.idleMs) });
          }
          ctx.progress.tick(row.estimateMs);
        },
      );
    } finally {
      await Promise.all([...servers.values()].map((s) => s.server.close()));
    }

    const of = (key: string, mode: Mode | 'idle') =>
      samples.filter((s) => s.row === key && s.mode === mode).map((s) => s.ms);
    const stats = new Map<string, Summary>();
    const names: Record<Mode | 'idle', string> = {
      reused: 'cancel → slot reused',
      stopped: 'cancel → stopped',
      idle: 'zero-work call, idle server',
    };
    const tableRows: (string | number)[][] = [];
    for (const r of all) {
      for (const mode of ['reused', 'stopped', 'idle'] as const) {
        const s = summarize(of(r.key, mode));
        stats.set(`${r.key}/${mode}`, s);
        tableRows.push([rowLabel(r), names[mode], s.n, fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)]);
      }
    }
    const missNote = [...misses]
      .map(([k, m]) => `${k}: ${m.failed} failed, ${m.neverStopped} not stopped in ${STOP_WAIT_MS / 1000} s`)
      .join('; ');
    const table: Table = {
      title: 'Latency after a cancellation over HTTP (ms), one worker thread, 1 ms stages',
      columns: ['server, cancel', 'measure', 'n', 'p50', 'p90', 'p99', 'max'],
      rows: tableRows,
      note: `Samples left out (B not answered with a result, or A never reported stopped): ${missNote || 'none'}.`,
    };

    const targets: Target[] = [];
    const ratioRows: (string | number)[][] = [];
    for (const era of ['2026', '2025'] as const) {
      const ours = stats.get(`ours-${era}/reused`);
      for (const base of ['f', 'g', 'h']) {
        const b = stats.get(`${base}-${era}/reused`);
        if (!ours || !b || ours.n === 0 || b.n === 0) continue;
        const x = b.p50 / ours.p50;
        ratioRows.push([
          era === '2026' ? '2026 closed stream' : '2025 cancel POST',
          `(${base})`,
          `${x.toFixed(1)}×`,
          `${(b.p99 / ours.p99).toFixed(1)}×`,
          fmt(ours.p50),
          fmt(b.p50),
        ]);
        if (era === '2026' && base === 'f') {
          targets.push({
            name: 'Cancel → slot reused over HTTP, 2026 closed stream: p50 vs (f)',
            goal: '≥ 25× faster',
            measured: `${x.toFixed(1)}× (${fmt(b.p50)} / ${fmt(ours.p50)} ms; ours p99 ${fmt(ours.p99)} ms)`,
            met: x >= 25,
          });
        }
      }
    }
    const ratios: Table = {
      title: 'Cancel → slot reused over HTTP: the baseline ÷ ours',
      columns: ['cancel', 'baseline', 'p50', 'p99', 'ours p50 (ms)', 'its p50 (ms)'],
      rows: ratioRows,
    };

    return {
      id: this.id,
      title: this.title,
      method: [
        `Each server runs with one worker thread (ours with its default standby thread and \`--grace-ms ${GRACE_MS}\`), unpinned, as in scenario 1. The raw keep-alive HTTP client of scenario 8. One sample: ${warm} zero-work calls one after another (the last timed as the idle-server call); a call A = spin(${A_MS} ms, 1 ms stages) cancelled ${LEAD_MS} ms + a random 0–2 ms after it was sent. In 2026-07-28 the cancel closes A's response stream (the client destroys its socket); in 2025-11-25 it is a \`notifications/cancelled\` POST in A's session, timed from when it is sent.`,
        "- **cancel → slot reused**: a zero-work call B (2025: in the same session) is sent 2 ms before the cancel and queues behind A; the time is from the cancel to B's answer, which must be a result.",
        "- **cancel → stopped**: the client reads the server's stop counter (ours: `executor://stats` `cancelled` − `stopping`; the baselines: `bench://stats` `stopped`) through a second 2025 session, back to back, until A is reported stopped.",
        '- Modes alternate sample by sample; rows alternate. (h) fastmcp serves 2025-11-25 only.',
      ].join('\n'),
      params: { aMs: A_MS, leadMs: LEAD_MS, graceMs: GRACE_MS, warm, rows: all },
      servers: kinds.map((k) => serverInfo(SPECS[k]!)),
      tables: [table, ratios],
      headline: { ...ratios, title: 'Cancel → slot reused over HTTP, the baseline ÷ ours' },
      charts: (['2026', '2025'] as const).map((era) => ({
        file: `http-cancel-reused-${era}`,
        title: `Cancel → slot reused over HTTP, ${era}`,
        spec: cdfChart(
          `Cancel → slot reused over HTTP, ${era === '2026' ? '2026 closed stream' : '2025 cancel POST'}`,
          all.filter((r) => r.era === era).map((r) => ({ label: rowLabel(r), values: of(r.key, 'reused') })),
        ),
      })),
      targets,
      samples: { samples, misses: Object.fromEntries(misses) },
    };
  },
};
