/**
 * A server subprocess over stdio spoken to in raw JSON-RPC, with answers
 * looked up by id (the race storm sends thousands), for the task tests. Every
 * task message that arrives is checked against the SDK's schemas.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  ProgressNotificationSchema,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { CLI, sleep } from './helpers.js';

export const TASK_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/task-tools.js', import.meta.url));

export type Wire = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown> };
export type Answer = { result: Record<string, unknown> } | { error: { code: number; message: string } };

/** Which SDK schema each answer must pass, by request method. */
const RESULT_SCHEMAS = {
  'tools/call+task': CreateTaskResultSchema,
  'tasks/get': GetTaskResultSchema,
  'tasks/list': ListTasksResultSchema,
  'tasks/cancel': CancelTaskResultSchema,
  'tasks/result': CallToolResultSchema,
} as const;

export class TaskWire {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every message the server wrote, in order. */
  readonly lines: Wire[] = [];
  /** Schema violations seen (each one a test failure). */
  readonly violations: string[] = [];
  readonly exited: Promise<number | null>;
  stderr = '';
  private partial = '';
  private nextId = 1;
  private readonly waiting = new Map<
    unknown,
    { resolve: (a: Answer) => void; kind: keyof typeof RESULT_SCHEMAS | undefined }
  >();

  constructor(args: string[] = []) {
    this.child = spawn(process.execPath, [CLI, 'serve', '--tools', TASK_TOOLS, ...args], { stdio: 'pipe' });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  private onData(d: Buffer): void {
    const parts = (this.partial + d.toString('utf8')).split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      const m = JSON.parse(line) as Wire;
      this.lines.push(m);
      if (m.method === 'notifications/tasks/status')
        this.check(TaskStatusNotificationSchema, m, 'notifications/tasks/status');
      if (m.method === 'notifications/progress') this.check(ProgressNotificationSchema, m, 'notifications/progress');
      if (m.method !== undefined || !('id' in m)) continue;
      const w = this.waiting.get(m.id);
      if (!w) continue;
      this.waiting.delete(m.id);
      const answer = m as unknown as Answer;
      if ('result' in answer && w.kind) {
        this.check(RESULT_SCHEMAS[w.kind], answer.result, w.kind);
        if (
          w.kind === 'tasks/result' &&
          !(answer.result._meta as Record<string, unknown> | undefined)?.[RELATED_TASK_META_KEY]
        )
          this.violations.push(`tasks/result without ${RELATED_TASK_META_KEY}`);
      }
      w.resolve(answer);
    }
  }

  private check(
    schema: { safeParse(v: unknown): { success: boolean; error?: unknown } },
    value: unknown,
    what: string,
  ): void {
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      this.violations.push(`${what}: ${String(parsed.error)} in ${JSON.stringify(value).slice(0, 300)}`);
  }

  send(message: unknown): void {
    this.child.stdin.write(JSON.stringify(message) + '\n');
  }

  /** Sends a request and waits for its answer (checked against the SDK schema for its method). */
  request(method: string, params: Record<string, unknown> = {}, ms = 30_000): Promise<Answer> {
    const id = this.nextId++;
    return this.requestWithId(id, method, params, ms);
  }

  requestWithId(id: string | number, method: string, params: Record<string, unknown>, ms = 30_000): Promise<Answer> {
    const kind =
      method === 'tools/call'
        ? params.task !== undefined
          ? 'tools/call+task'
          : undefined
        : (method as keyof typeof RESULT_SCHEMAS);
    const answer = new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no answer to ${method} ${JSON.stringify(id)} within ${ms} ms; stderr: ${this.stderr.slice(-500)}`,
            ),
          ),
        ms,
      );
      this.waiting.set(id, {
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        kind: kind !== undefined && kind in RESULT_SCHEMAS ? kind : undefined,
      });
    });
    this.send({ jsonrpc: '2.0', id, method, params });
    return answer;
  }

  /** A request that must succeed; its result. */
  async ok(method: string, params: Record<string, unknown> = {}, ms?: number): Promise<Record<string, unknown>> {
    const a = await this.request(method, params, ms);
    if ('error' in a) throw new Error(`${method} failed: ${a.error.code} ${a.error.message}`);
    return a.result;
  }

  /** Creates a task; its Task object. */
  async createTask(
    name: string,
    args: Record<string, unknown>,
    extra: { ttl?: number; progressToken?: string | number } = {},
  ): Promise<Task> {
    const params: Record<string, unknown> = {
      name,
      arguments: args,
      task: extra.ttl === undefined ? {} : { ttl: extra.ttl },
    };
    if (extra.progressToken !== undefined) params._meta = { progressToken: extra.progressToken };
    const r = await this.ok('tools/call', params);
    return r.task as Task;
  }

  async initialize(): Promise<void> {
    await this.ok('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'task-wire', version: '1' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async stats(): Promise<Record<string, number>> {
    const r = await this.ok('resources/read', { uri: 'executor://stats' });
    return JSON.parse((r.contents as { text: string }[])[0]!.text) as Record<string, number>;
  }

  /** Status notifications for a task, in order. */
  statusNotes(taskId: string): Task[] {
    return this.lines
      .filter((m) => m.method === 'notifications/tasks/status' && m.params?.taskId === taskId)
      .map((m) => m.params as unknown as Task);
  }

  async until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stderr ${this.stderr.slice(-500)}`);
      await sleep(10);
    }
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/**
 * Every progress notification of each (task, token) pair came before that task's status notification,
 * at least one of each arrived, and no progress carried any other token.
 */
export function expectProgressBeforeTerminal(
  lines: readonly Wire[],
  pairs: readonly (readonly [{ taskId: string }, string | number])[],
): void {
  for (const [task, token] of pairs) {
    const progress = lines.flatMap((m, i) =>
      m.method === 'notifications/progress' && m.params?.progressToken === token ? [i] : [],
    );
    const terminal = lines.findIndex(
      (m) => m.method === 'notifications/tasks/status' && m.params?.taskId === task.taskId,
    );
    expect(progress.length).toBeGreaterThan(0);
    expect(terminal).toBeGreaterThan(-1);
    expect(progress.every((i) => i < terminal)).toBe(true);
  }
  const tokens = new Set(pairs.map(([, token]) => token));
  expect(
    lines
      .filter((m) => m.method === 'notifications/progress')
      .every((m) => tokens.has(m.params?.progressToken as string | number)),
  ).toBe(true);
}
