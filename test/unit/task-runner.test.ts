/**
 * The task runner over an in-process backend (./scripted-backend.ts, its races decided on a real state word): a
 * task follows its job's outcome once, tasks/cancel is decided by the job's race, a 2026 task's questions move it
 * through input_required and back, and the counters always add up (created = working + completed + failed +
 * cancelled + expired).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRunner, taskSession, type TaskStats } from '../../dist/src/tasks/runner.js';
import { TaskNotFoundError, TaskTerminalError, TaskInputError } from '../../dist/src/tasks/errors.js';
import { ScriptedBackend, settled } from './scripted-backend.js';

const runners: TaskRunner[] = [];
function setup(options: ConstructorParameters<typeof TaskRunner>[1] = {}) {
  const backend = new ScriptedBackend();
  const runner = new TaskRunner(backend, { sweepIntervalMs: 60_000, ...options });
  runners.push(runner);
  const job = (taskId: string, owner = 'o') => backend.call(taskSession(owner), taskId);
  return { backend, runner, job };
}
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

function addsUp(s: TaskStats): void {
  expect(s.tasksCreated).toBe(s.tasksWorking + s.tasksCompleted + s.tasksFailed + s.tasksCancelled + s.tasksExpired);
}

describe('TaskRunner', () => {
  it('a task takes its job’s outcome once', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {} });
    expect(t.status).toBe('working');
    expect(job(t.taskId).state).toBe('running');
    expect(job(t.taskId).complete('hello')).toBe(true);
    const r = await runner.result('o', t.taskId);
    expect(r.task.status).toBe('completed');
    expect(r.answer).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: 'hello' }] } });
    expect(runner.stats()).toMatchObject({ tasksCreated: 1, tasksCompleted: 1, tasksWorking: 0 });
    addsUp(runner.stats());
  });

  it('a failed job fails its task', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {} });
    job(t.taskId).fail('stage broke');
    expect((await runner.result('o', t.taskId)).task.status).toBe('failed');
    addsUp(runner.stats());
  });

  it('tasks/cancel that wins the race: cancelled before it is answered, and the job’s completion loses', async () => {
    const { runner, job, backend } = setup();
    const t = await runner.create('o', { tool: 't', args: {} });
    const cancelled = await runner.cancelTask('o', t.taskId);
    expect(cancelled.status).toBe('cancelled');
    expect(backend.cancels.at(-1)).toMatchObject({ result: 'cancelled-running', reason: 'tasks/cancel' });
    expect(job(t.taskId).complete()).toBe(false);
    await settled();
    expect((await runner.get('o', t.taskId)).status).toBe('cancelled');
    expect(runner.stats()).toMatchObject({ tasksCancelled: 1, tasksCompleted: 0 });
    addsUp(runner.stats());
  });

  it('tasks/cancel after completion won: refused as terminal, the task keeps completed', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {} });
    job(t.taskId).complete();
    await settled();
    await expect(runner.cancelTask('o', t.taskId)).rejects.toBeInstanceOf(TaskTerminalError);
    expect((await runner.get('o', t.taskId)).status).toBe('completed');
  });

  it('another owner’s task is not found, for every operation', async () => {
    const { runner } = setup();
    const t = await runner.create('o', { tool: 't', args: {} });
    await expect(runner.get('x', t.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(runner.cancelTask('x', t.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(runner.update('x', t.taskId, {})).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('closing an owner cancels its working tasks and forgets them all', async () => {
    const closed: [string, number][] = [];
    const { runner, job } = setup({ onOwnerClosed: (owner, n) => void closed.push([owner, n]) });
    const a = await runner.create('o', { tool: 't', args: {} });
    const b = await runner.create('o', { tool: 't', args: {} });
    job(b.taskId).complete();
    await settled();
    expect(runner.holdsTasks('o')).toBe(true);
    expect(await runner.closeOwner('o')).toBe(1);
    expect(closed).toEqual([['o', 1]]);
    expect(job(a.taskId).state).toBe('cancelled');
    expect(runner.holdsTasks('o')).toBe(false);
    await settled();
    addsUp(runner.stats());
  });

  it('expiry cancels a working task’s job and counts it expired', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {}, ttlMs: 1000 });
    await runner.sweep(Date.parse(t.createdAt) + 2000);
    expect(job(t.taskId).state).toBe('cancelled');
    await settled();
    const s = runner.stats();
    expect(s).toMatchObject({ tasksExpired: 1, tasksWorking: 0, tasksStored: 0 });
    addsUp(s);
  });

  it('2026: a question puts the task in input_required; tasks/update answers it and the task is working again', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {}, clientCapabilities: { elicitation: {} } });
    const asked = job(t.taskId).ask('elicitation/create', {
      message: 'name?',
      requestedSchema: { type: 'object', properties: {} },
    });
    await settled();
    expect((await runner.get('o', t.taskId)).status).toBe('input_required');
    const requests = await runner.inputRequests(t.taskId);
    expect(Object.keys(requests!)).toEqual(['elicitation-1']);
    expect(runner.stats().tasksInputRequired).toBe(1);
    await expect(runner.update('o', t.taskId, { 'elicitation-1': { action: 'nonsense' } })).rejects.toBeInstanceOf(
      TaskInputError,
    );
    await runner.update('o', t.taskId, { 'other-key': {} }); // nothing it waits for: ignored, still waiting
    expect(await runner.inputRequests(t.taskId)).toBeDefined();
    await runner.update('o', t.taskId, { 'elicitation-1': { action: 'accept', content: {} } });
    expect(await asked).toEqual({ action: 'accept', content: {} });
    await settled();
    expect((await runner.get('o', t.taskId)).status).toBe('working');
    expect(runner.stats()).toMatchObject({ tasksInputRequired: 0, taskUpdates: 1 });
    await expect(runner.update('o', t.taskId, { x: {} })).rejects.toBeInstanceOf(TaskInputError);
  });

  it('2026: a question for a capability the request did not declare is refused at once', async () => {
    const { runner, job } = setup();
    const t = await runner.create('o', { tool: 't', args: {}, clientCapabilities: {} });
    await expect(job(t.taskId).ask('sampling/createMessage')).rejects.toThrow(
      /did not declare the 'sampling' capability/,
    );
    expect(await runner.inputRequests(t.taskId)).toBeUndefined();
  });

  it('2026: a task unanswered within the input wait is cancelled; its question is rejected', async () => {
    const { runner, job } = setup({ inputWaitMs: 20 });
    const t = await runner.create('o', { tool: 't', args: {}, clientCapabilities: { roots: {} } });
    const asked = job(t.taskId).ask('roots/list');
    await expect(asked).rejects.toThrow(/not needed: the task stopped/);
    expect((await runner.result('o', t.taskId)).task.status).toBe('cancelled');
    expect(runner.stats()).toMatchObject({ taskInputWaitsExpired: 1, tasksInputRequired: 0 });
  });
});
