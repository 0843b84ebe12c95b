/**
 * The seed's storm, task edition: thousands of randomized races between a
 * task's completion and its tasks/cancel over stdio. For every task the final
 * status, the tasks/cancel answer, the tasks/result answer and the status
 * notifications must tell the same story, and the counters must add up.
 */
import { expect, it } from 'vitest';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { rng } from '../bench/lib/rng.js';
import { sleep } from './helpers.js';
import { TaskWire, type Answer } from './task-wire.js';

const RACES = 2_000;
const PARALLEL = 16;

it(`${RACES} randomized complete-vs-tasks/cancel races agree on every task, and the counters add up`, async () => {
  const seed = Number(process.env.TASK_STORM_SEED ?? Date.now() % 1_000_000);
  const random = rng(seed);
  const w = new TaskWire(['--task-ttl-ms', '300000']); // finished tasks do not count against the working limit;
  try {
    await w.initialize();
    const outcomes: { task: Task; cancel: Answer; result: Answer; final: Task }[] = [];
    let next = 0;
    const race = async () => {
      while (next < RACES) {
        next++;
        const ms = random() * 4;
        const wait = Math.floor(random() * 5); // 0: cancel right behind the CreateTaskResult
        const task = await w.createTask('spin', { ms, stageMs: 0.5 });
        if (wait > 0) await sleep(wait - 1);
        const cancel = await w.request('tasks/cancel', { taskId: task.taskId });
        const result = await w.request('tasks/result', { taskId: task.taskId });
        const get = await w.request('tasks/get', { taskId: task.taskId });
        if (!('result' in get)) throw new Error(`tasks/get failed for ${task.taskId}: ${JSON.stringify(get)}`);
        outcomes.push({ task, cancel, result, final: get.result as unknown as Task });
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, race));
    await sleep(100); // the last status notifications
    let accepted = 0;
    const problems: string[] = [];
    for (const { task, cancel, result, final } of outcomes) {
      const notes = w.statusNotes(task.taskId).map((t) => t.status);
      if ('result' in cancel) {
        accepted++;
        const ok =
          (cancel.result as unknown as Task).status === 'cancelled' &&
          final.status === 'cancelled' &&
          'error' in result &&
          result.error.code === -32800 &&
          notes.join() === 'cancelled';
        if (!ok) problems.push(`cancel accepted but: ${JSON.stringify({ final: final.status, result, notes })}`);
      } else {
        const text = 'result' in result ? (result.result.content as { text: string }[])[0]?.text : undefined;
        const ok =
          cancel.error.code === -32602 &&
          cancel.error.message === "Cannot cancel task: already in terminal status 'completed'" &&
          final.status === 'completed' &&
          /^spun \d+ slices/.test(text ?? '') &&
          notes.join() === 'completed';
        if (!ok)
          problems.push(
            `cancel refused but: ${JSON.stringify({ cancel: cancel.error, final: final.status, result, notes })}`,
          );
      }
    }
    expect(problems.slice(0, 5), `seed ${seed}`).toEqual([]);
    expect(outcomes.length).toBe(RACES);
    // Both sides must really have won often, or this was no race.
    expect(accepted, `seed ${seed}`).toBeGreaterThan(RACES * 0.05);
    expect(RACES - accepted, `seed ${seed}`).toBeGreaterThan(RACES * 0.05);
    const s = await w.stats();
    expect(s).toMatchObject({
      tasksCreated: RACES,
      tasksWorking: 0,
      tasksCancelled: accepted,
      tasksCompleted: RACES - accepted,
      tasksFailed: 0,
      tasksExpired: 0,
      tasksStored: RACES,
      cancelled: accepted,
      completed: RACES - accepted,
      failed: 0,
      hardKilled: 0,
      responsesDropped: 0,
    });
    expect(w.violations).toEqual([]);
    console.log(`task storm (seed ${seed}): ${accepted} cancels accepted, ${RACES - accepted} completions first`);
  } finally {
    await w.close();
  }
}, 120_000);
