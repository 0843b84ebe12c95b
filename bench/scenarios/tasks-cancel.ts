/**
 * Scenario 5: cancelling a task (`tasks/cancel`) against cancelling a plain
 * call (`notifications/cancelled`), on the same server in the same run:
 * ours over stdio, one worker thread, 1 ms stages.
 *
 * One sample: warm-up calls, then a long spin A (a task, or a plain call),
 * then a zero-work plain call B that queues behind it, then the cancel of A:
 *  - task: `tasks/cancel`; timed from sending it to its answer (status
 *    `cancelled`), and to B's response (the slot reused);
 *  - plain: the SDK client aborts A (`notifications/cancelled`); timed from
 *    the abort to B's response.
 * The two kinds alternate sample by sample.
 */
import { CancelTaskResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { cdfChart } from '#dist/src/probe/charts.js';
import { alternate, fmt, sleep, summarize, us } from '#dist/src/probe/stats.js';
import { type RunContext, type Scenario, type ScenarioResult, type Target, serverInfo } from '../lib/scenario.js';
import { rng } from '../lib/rng.js';
import { A_MS, GRACE_MS, LEAD_MS, WARM_CALLS } from '../lib/sample-timing.js';
import { type Connection, type ServerSpec, withConnections } from '../lib/servers.js';

const STAGE_MS = 1;
/** Short, so the session never reaches its task limit (256 by default): a sample takes about 40 ms. */
const TASK_TTL_MS = 1000;

type Kind = 'task' | 'plain';
type Measure = 'task: tasks/cancel → cancelled' | 'task: tasks/cancel → slot reused' | 'plain: cancel → slot reused';

interface Sample {
  readonly measure: Measure;
  readonly ms: number;
}

const spec: ServerSpec = { kind: 'ours', transport: 'stdio', threads: 1, graceMs: GRACE_MS };

async function sample(conn: Connection, kind: Kind, random: () => number): Promise<Sample[]> {
  for (let i = 0; i < WARM_CALLS; i++) await conn.warm();
  const args = { ms: A_MS, stageMs: STAGE_MS };
  if (kind === 'plain') {
    const controller = new AbortController();
    const a = conn.callSpin(args, { signal: controller.signal }).catch(() => undefined);
    await sleep(LEAD_MS + random() * 2);
    const b = conn.callSpin({ ms: 0 });
    await sleep(2); // B is queued at the server before the cancel is sent
    const t0 = performance.now();
    controller.abort();
    await b;
    const reused = performance.now() - t0;
    await a;
    return [{ measure: 'plain: cancel → slot reused', ms: reused }];
  }
  const { task } = await conn.client.request(
    { method: 'tools/call', params: { name: 'spin', arguments: args, task: { ttl: TASK_TTL_MS } } },
    CreateTaskResultSchema,
  );
  await sleep(LEAD_MS + random() * 2);
  let reusedAt = 0;
  const b = conn.callSpin({ ms: 0 }).then(() => (reusedAt = performance.now()));
  await sleep(2);
  const t0 = performance.now();
  const cancelled = await conn.client.request(
    { method: 'tasks/cancel', params: { taskId: task.taskId } },
    CancelTaskResultSchema,
  );
  const cancelMs = performance.now() - t0;
  if (cancelled.status !== 'cancelled') throw new Error(`tasks/cancel answered ${cancelled.status}`);
  await b;
  return [
    { measure: 'task: tasks/cancel → cancelled', ms: cancelMs },
    { measure: 'task: tasks/cancel → slot reused', ms: reusedAt - t0 },
  ];
}

export const tasksCancel: Scenario = {
  id: 'tasks-cancel',
  title: '5. tasks/cancel → cancelled and → slot reused, against the plain call',
  estimateMs: (quick) => (quick ? 24 : 600) * 40,

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const perKind = ctx.quick ? 12 : 300;
    const samples: Sample[] = [];
    await withConnections([spec], async ([conn]) => {
      const random = rng(5);
      await alternate<Kind>(
        ['task', 'plain'],
        () => perKind,
        async (kind) => {
          samples.push(...(await sample(conn!, kind, random)).map((s) => ({ ...s, ms: us(s.ms) })));
          ctx.progress.tick(40);
        },
      );
    });
    const measures: Measure[] = [
      'task: tasks/cancel → cancelled',
      'task: tasks/cancel → slot reused',
      'plain: cancel → slot reused',
    ];
    const of = (m: Measure) => samples.filter((s) => s.measure === m).map((s) => s.ms);
    const stats = new Map(measures.map((m) => [m, summarize(of(m))]));
    const rows = measures.map((m) => {
      const s = stats.get(m)!;
      return [m, s.n, fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)];
    });
    const task = stats.get('task: tasks/cancel → slot reused')!;
    const plain = stats.get('plain: cancel → slot reused')!;
    const ratio = task.p50 / plain.p50;
    const targets: Target[] = [
      {
        name: "tasks/cancel → slot reused, 1 ms stages, stdio: p50 vs the plain call's cancel → slot reused",
        goal: '≤ 1.5×',
        measured: `${ratio.toFixed(2)}× (${fmt(task.p50)} / ${fmt(plain.p50)} ms)`,
        met: ratio <= 1.5,
      },
    ];
    const table = {
      title: 'Cancelling a task vs a plain call, 1 ms stages, stdio (ms)',
      columns: ['measure', 'n', 'p50', 'p90', 'p99', 'max'],
      rows,
    };
    return {
      id: this.id,
      title: this.title,
      headline: table,
      method: [
        `Ours over stdio with one worker thread and its default standby thread, \`--grace-ms ${GRACE_MS}\`. One sample: ${WARM_CALLS} zero-work calls, then A = spin(${A_MS} ms, ${STAGE_MS} ms stages), cancelled ${LEAD_MS} ms + a random 0–2 ms after it was sent; a zero-work plain call B is sent 2 ms before the cancellation and queues behind A. Task and plain samples alternate.`,
        '- **task**: A is a task-augmented `tools/call` (answered at once with the task); the cancellation is a `tasks/cancel` request. "→ cancelled" is from sending it to its answer (status `cancelled`, which the server sends once the cancellation won on the job\'s state word); "→ slot reused" is from sending it to B\'s response.',
        "- **plain**: A is a plain `tools/call` that the SDK client aborts (`notifications/cancelled`); from the abort to B's response.",
      ].join('\n'),
      params: {
        stageMs: STAGE_MS,
        aMs: A_MS,
        leadMs: LEAD_MS,
        graceMs: GRACE_MS,
        taskTtlMs: TASK_TTL_MS,
        samplesPerKind: perKind,
      },
      servers: [serverInfo(spec)],
      tables: [table],
      charts: [
        {
          file: 'tasks-cancel-cdf',
          title: 'tasks/cancel vs a plain cancel, 1 ms stages',
          spec: cdfChart(
            'Cancel latency, 1 ms stages, stdio',
            measures.map((m) => ({ label: m, values: of(m) })),
          ),
        },
      ],
      targets,
      samples,
    };
  },
};
