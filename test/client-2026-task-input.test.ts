/**
 * `callToolAsTask` against a 2026-07-28 task that asks the client (the tasks
 * extension's `input_required`), our server as a subprocess over stdio and
 * Streamable HTTP on 127.0.0.1, the eliciting fixture tool run as a task
 * (--task-after-ms 0): the question `tasks/get` shows goes to the client's
 * own elicitation handler (the one a 2025 server request or a 2026
 * multi-round-trip call runs), the answer goes back in one `tasks/update`,
 * and the handle follows the task to its result. Aborting while the handler
 * works cancels the task once (`tasks/cancel`), the handler's signal fires
 * and its late answer is never sent. A handler that fails ends the task too.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport, type Task } from '@modelcontextprotocol/client';
import { CallAbortedError, CancelAwareClient, type ElicitationHandler } from '../dist/src/client/index.js';
import { Tap, type Msg } from './client-helpers.js';
import { CLI, startHttpServer, until } from './helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
type Kind = 'stdio' | 'http';
/** Per test: the server's start is bounded by connect's 120 s on a loaded machine. */
const TEST_MS = 240_000;
const SERVER_ARGS = ['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS, '--task-after-ms', '0'];

let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  cleanup = [];
});

interface Session {
  readonly client: CancelAwareClient;
  readonly tap: Tap;
  readonly errors: Error[];
}

async function start(kind: Kind, onElicit: ElicitationHandler): Promise<Session> {
  let inner;
  if (kind === 'stdio') {
    inner = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', ...SERVER_ARGS],
      stderr: 'pipe',
    });
  } else {
    const server = await startHttpServer(SERVER_ARGS);
    cleanup.push(() => server.stop());
    inner = new StreamableHTTPClientTransport(server.url);
  }
  const tap = new Tap(inner);
  const client = new CancelAwareClient({ name: 'client-task-input', version: '1.0.0' }).onElicitation(onElicit);
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(tap, { timeout: 120_000 });
  cleanup.push(() => client.close());
  expect(client.era).toBe('modern');
  return { client, tap, errors };
}

const serverStats = async (s: Session) => {
  const r = await s.client.sdk.readResource({ uri: 'executor://stats' });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, number>;
};
const sent = (s: Session, method: string): Msg[] => s.tap.sent.filter((m) => m.method === method);
/** The `inputRequests` of every tasks/get answer, in order. */
const shownQuestions = (s: Session) =>
  s.tap.received.flatMap((m) =>
    m.result?.status === 'input_required' && m.result.inputRequests
      ? [m.result.inputRequests as Record<string, unknown>]
      : [],
  );
const greet = (ms = 0) => ({ name: 'greet_user', arguments: { ms } });
const textOf = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;
const noRepeats = (statuses: string[]) => statuses.filter((x, i) => i > 0 && x === statuses[i - 1]);

describe.each(['stdio', 'http'] as Kind[])('callToolAsTask, a 2026 task that asks the client, over %s', (kind) => {
  it(
    'answered: tasks/get shows the question, the handler runs once (its id the key), one tasks/update carries its answer, the same job completes; each status reported once',
    async () => {
      const asked: { message: string; requestId: unknown }[] = [];
      const s = await start(kind, (params, { requestId }) => {
        asked.push({ message: params.message, requestId });
        return { action: 'accept', content: { name: 'Ada' } };
      });
      const statuses: Task['status'][] = [];
      const handle = await s.client.callToolAsTask(greet(), { onstatus: (t) => statuses.push(t.status) });
      expect(sent(s, 'tools/call')).toHaveLength(1);
      const result = await handle.result();
      expect(textOf(result)).toBe('hello, Ada; prepared 1 time(s) in this thread');
      const [key] = Object.keys(shownQuestions(s)[0] ?? {});
      expect(key).toBeDefined();
      expect(asked).toEqual([{ message: 'What is your name?', requestId: key }]);
      const updates = sent(s, 'tasks/update');
      expect(updates).toHaveLength(1);
      expect(updates[0]!.params).toMatchObject({
        taskId: handle.taskId,
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
      });
      expect(Object.keys(updates[0]!.params!.inputResponses as object)).toEqual([key]);
      expect(
        (updates[0]!.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'],
      ).toMatchObject({ elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
      expect(s.tap.responsesFor(updates[0]!.id)[0]).toMatchObject({ result: { resultType: 'complete' } });
      // Every status change once: working, the question, (working again, if a poll saw it), completed.
      expect(statuses[0]).toBe('working');
      expect(statuses.filter((x) => x === 'input_required')).toEqual(['input_required']);
      expect(statuses.at(-1)).toBe('completed');
      expect(statuses.filter((x) => x === 'completed')).toHaveLength(1);
      expect(noRepeats(statuses)).toEqual([]);
      expect(handle.task.status).toBe('completed');
      expect(sent(s, 'tasks/cancel')).toEqual([]);
      expect(s.tap.cancelsSent()).toEqual([]);
      expect(await serverStats(s)).toMatchObject({
        tasksCompleted: 1,
        taskUpdates: 1,
        tasksInputRequired: 0,
        cancelled: 0,
        hardKilled: 0,
      });
      expect(s.client.stats()).toMatchObject({ taskUpdatesSent: 1, taskCancelsSent: 0, cancelsSent: 0, pending: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "aborted while the handler asks the user: tasks/cancel once, the handler's signal fires, its late answer never sent; the task ends cancelled, reported once; the job stopped",
    async () => {
      let handlerAborted: unknown;
      let asked = 0;
      const s = await start(kind, (_params, { signal }) => {
        asked++;
        // A user who answers only once the task was aborted: that answer must not go back.
        return new Promise((resolve) =>
          signal.addEventListener(
            'abort',
            () => {
              handlerAborted = signal.reason ?? true;
              resolve({ action: 'accept', content: { name: 'too late' } });
            },
            { once: true },
          ),
        );
      });
      const stop = new AbortController();
      const statuses: Task['status'][] = [];
      const handle = await s.client.callToolAsTask(greet(), {
        signal: stop.signal,
        onstatus: (t) => statuses.push(t.status),
      });
      const result = handle.result().catch((e: unknown) => e);
      await until(() => asked === 1, 60_000, 'the handler to be asked');
      stop.abort('user closed the dialog');
      const error = (await result) as CallAbortedError;
      expect(error).toBeInstanceOf(CallAbortedError);
      expect(error).toMatchObject({ name: 'AbortError', reason: 'user closed the dialog' });
      await until(() => handlerAborted !== undefined, 10_000, 'the handler to see the abort');
      await until(async () => (await serverStats(s)).inFlight === 0, 60_000, 'the job to stop');
      const cancels = sent(s, 'tasks/cancel');
      expect(cancels).toHaveLength(1);
      expect(cancels[0]!.params).toMatchObject({ taskId: handle.taskId });
      expect(sent(s, 'tasks/update')).toEqual([]);
      expect(s.tap.cancelsSent()).toEqual([]); // a task is never cancelled with notifications/cancelled
      expect(asked).toBe(1);
      expect(handle.task.status).toBe('cancelled');
      expect((await handle.status()).status).toBe('cancelled');
      expect(statuses.filter((x) => x === 'cancelled')).toEqual(['cancelled']);
      expect(statuses.filter((x) => x === 'input_required')).toEqual(['input_required']);
      expect(noRepeats(statuses)).toEqual([]);
      await expect(handle.result()).rejects.toBeInstanceOf(CallAbortedError);
      expect(await handle.cancel()).toBe(true); // the same, accepted cancel: nothing more sent
      expect(sent(s, 'tasks/cancel')).toHaveLength(1);
      expect(await serverStats(s)).toMatchObject({
        tasksCancelled: 1,
        cancelled: 1,
        hardKilled: 0,
        tasksCompleted: 0,
        taskUpdates: 0,
        tasksInputRequired: 0,
      });
      expect(s.client.stats()).toMatchObject({ taskCancelsSent: 1, taskUpdatesSent: 0, cancelsSent: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'a handler that throws: result() rejects with its error, the task is cancelled (once) rather than left waiting, nothing answered',
    async () => {
      const s = await start(kind, () => {
        throw new Error('the dialog crashed');
      });
      const handle = await s.client.callToolAsTask(greet());
      await expect(handle.result()).rejects.toThrow('the dialog crashed');
      await until(async () => (await serverStats(s)).inFlight === 0, 60_000, 'the job to stop');
      expect(sent(s, 'tasks/cancel')).toHaveLength(1);
      expect(sent(s, 'tasks/update')).toEqual([]);
      expect((await handle.status()).status).toBe('cancelled');
      expect(await serverStats(s)).toMatchObject({ tasksCancelled: 1, hardKilled: 0, tasksCompleted: 0 });
    },
    TEST_MS,
  );
});
