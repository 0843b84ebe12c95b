/**
 * The main pool's wait list: Piscina's task queue, fair between sessions.
 * Driven by a real Piscina pool (one thread, the wait list as its `taskQueue`,
 * a balancer that tells the list which task gets the thread, as the executor's
 * pool does), and on its own for the steps Piscina takes in order: shift (an
 * offer), then the balancer's hand-out or a give-back.
 */
import { describe, expect, it } from 'vitest';
import { Piscina } from 'piscina';
import { WaitList, type PoolTask, type Waiting } from '../dist/src/admission/wait-list.js';
import type { EchoTask } from './fixtures/echo-worker.js';

const WORKER = new URL('../dist-dev/test/fixtures/echo-worker.js', import.meta.url).href;

interface Job extends Waiting {
  readonly task: EchoTask & Record<symbol, unknown>;
}

/** A job whose hand-out is recorded in `started`; its payload carries it the way the executor's tasks do. */
function job(started: string[], tag: string, session: string, priority = 0, ms = 0): Job {
  const j: Job = {
    waitId: tag,
    session,
    priority,
    handOut: () => started.push(tag),
    task: { tag, ms },
  };
  j.task[Piscina.queueOptionsSymbol] = j;
  return j;
}

/** What Piscina queues: its task's queue options are the payload's. */
const queued = (j: Job) => ({ [Piscina.queueOptionsSymbol]: j }) as unknown as PoolTask;

describe('the wait list as Piscina runs it', () => {
  it('starts waiting jobs by priority, sessions taking turns, each exactly once, from Piscina’s own queue', async () => {
    const started: string[] = [];
    const list = new WaitList<Job>();
    const pool = new Piscina<EchoTask, string>({
      filename: WORKER,
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      taskQueue: list,
      loadBalancer: (task, workers) => {
        const worker = workers.find((w) => w.currentUsage === 0) ?? null;
        if (worker) list.handedOut(task);
        return worker;
      },
    });
    try {
      await pool.run({ tag: 'warm-up', ms: 0 });
      const jobs = [
        job(started, 'a0', 'A', 0, 100), // takes the thread; the rest wait
        job(started, 'a1', 'A'),
        job(started, 'a2', 'A'),
        job(started, 'a3', 'A'),
        job(started, 'b1', 'B'),
        job(started, 'b2', 'B'),
        job(started, 'c1', 'C', 1),
        job(started, 'gone', 'B'),
      ];
      const answers = jobs.map((j) => pool.run(j.task));
      expect(started).toEqual(['a0']);
      expect(list.size).toBe(7);
      expect(list.withdraw(jobs[7]!)).toBe(true);
      expect(list.withdraw(jobs[7]!)).toBe(false);
      expect(await Promise.all(answers.slice(0, 7))).toEqual(['a0', 'a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
      expect(started).toEqual(['a0', 'c1', 'a1', 'b1', 'a2', 'b2', 'a3']);
      expect(list.size).toBe(0);
    } finally {
      await pool.destroy();
    }
  });
});

describe('the wait list, step by step', () => {
  it('an offer leaves the job in place: given back it keeps its turn; handed out it leaves and starts', () => {
    const started: string[] = [];
    const list = new WaitList<Job>();
    const [a1, a2, b1] = [job(started, 'a1', 'A'), job(started, 'a2', 'A'), job(started, 'b1', 'B')];
    for (const j of [a1, a2, b1]) list.push(queued(j));
    const offered = list.shift()!;
    expect(list.size).toBe(3);
    list.push(offered); // Piscina's balancer found no thread: it gives the task back
    expect(list.size).toBe(3);
    expect(started).toEqual([]);
    expect(list.shift()).toBe(offered); // the same head again, not a1 behind a2 and b1
    list.handedOut(offered as never);
    expect(started).toEqual(['a1']);
    expect(list.size).toBe(2);
    // A task Piscina posts at once was never queued: it starts, and the list is untouched.
    const now = job(started, 'now', 'C');
    list.handedOut(queued(now) as never);
    expect(started).toEqual(['a1', 'now']);
    expect(list.size).toBe(2);
    // Sessions take turns: B, whose turn it is, before A's second.
    list.handedOut(list.shift() as never);
    expect(started).toEqual(['a1', 'now', 'b1']);
  });

  it('tasks without a job (the pool’s warm-up) go first; takeNext takes the next job without starting it; closed, nothing is offered', () => {
    const started: string[] = [];
    const list = new WaitList<Job>();
    const warmUp = { [Piscina.queueOptionsSymbol]: null } as unknown as PoolTask;
    const [a1, b1] = [job(started, 'a1', 'A'), job(started, 'b1', 'B')];
    list.push(queued(a1));
    list.push(warmUp);
    list.push(queued(b1));
    expect(list.shift()).toBe(warmUp);
    list.handedOut(warmUp as never);
    expect(list.size).toBe(2);
    expect(list.takeNext()).toBe(a1);
    expect(started).toEqual([]); // the caller starts it, on another pool
    expect(list.size).toBe(1);
    list.close();
    expect(list.size).toBe(0);
    expect(list.shift()).toBeNull();
    expect(list.takeNext()).toBeUndefined();
  });
});
