/**
 * The cancel-aware client against a 2026-07-28 multi-round-trip call (MRTR),
 * our server as a subprocess over stdio and Streamable HTTP on 127.0.0.1, with
 * the eliciting fixture tool: an `input_required` answer runs the client's own
 * elicitation handler and the call is retried with a new id, `inputResponses`
 * and the `requestState`. Aborting during the exchange cancels it: in the
 * handler (its signal fires, no retry leaves), or while the retry runs (the
 * retry's id cancelled the era's way); the server's work stops either way.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CallAbortedError, CancelAwareClient, type ElicitationHandler } from '../dist/src/client/index.js';
import { Tap, type Msg } from './client-helpers.js';
import { CLI, startHttpServer, until } from './helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
type Kind = 'stdio' | 'http';
/** Per test: the server's start is bounded by connect's 120 s on a loaded machine. */
const TEST_MS = 240_000;
/** A short wait for a retry, so a call whose client walked away is cancelled within the test. */
const SERVER_ARGS = ['--threads', '1', '--spare-threads', '0', '--tools', MRTR_TOOLS, '--input-wait-ms', '1500'];

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
  const client = new CancelAwareClient({ name: 'client-mrtr', version: '1.0.0' }).onElicitation(onElicit);
  const errors: Error[] = [];
  client.sdk.onerror = (e) => errors.push(e);
  await client.connect(tap, { timeout: 120_000 }); // a loaded machine may take long to start the server and its pool
  cleanup.push(() => client.close());
  expect(client.era).toBe('modern');
  return { client, tap, errors };
}

const serverStats = async (s: Session) => {
  const r = await s.client.sdk.readResource({ uri: 'executor://stats' });
  return JSON.parse((r.contents[0] as { text: string }).text) as Record<string, number>;
};
const calls = (s: Session): Msg[] => s.tap.sent.filter((m) => m.method === 'tools/call');
const greet = (ms = 0) => ({ name: 'greet_user', arguments: { ms } });
const textOf = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

describe.each(['stdio', 'http'] as Kind[])('cancel-aware client, 2026 multi-round-trip call over %s', (kind) => {
  it(
    "answered: the handler runs once, the retry (new id) carries inputResponses and the requestState, the result is the resumed job's",
    async () => {
      const asked: string[] = [];
      const s = await start(kind, (params) => {
        asked.push(params.message);
        return { action: 'accept', content: { name: 'Ada' } };
      });
      const result = await s.client.callTool(greet(), { timeout: 60_000 });
      expect(textOf(result)).toBe('hello, Ada; prepared 1 time(s) in this thread');
      expect(asked).toEqual(['What is your name?']);
      const [first, retry, ...more] = calls(s);
      expect(more).toEqual([]);
      expect(retry!.id).not.toBe(first!.id);
      const answered = s.tap.responsesFor(first!.id)[0]!.result as {
        resultType: string;
        inputRequests: Record<string, unknown>;
        requestState: string;
      };
      expect(answered.resultType).toBe('input_required');
      const [key] = Object.keys(answered.inputRequests);
      expect(retry!.params).toMatchObject({
        name: 'greet_user',
        requestState: answered.requestState,
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
      });
      expect(JSON.stringify(s.tap.sent)).not.toContain('mcp-cancel-pool/tag'); // our tag never leaves, on any round
      expect(await serverStats(s)).toMatchObject({
        completed: 1,
        cancelled: 0,
        inputRequired: 1,
        inputRetries: 1,
        inputWaiting: 0,
      });
      expect(s.client.stats()).toMatchObject({ cancelsSent: 0, staleCancelsSuppressed: 0, pending: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'declined: the decline goes back as the answer and the tool sees it',
    async () => {
      const s = await start(kind, () => ({ action: 'decline' }));
      const result = await s.client.callTool(greet(), { timeout: 60_000 });
      expect(textOf(result)).toBe('hello, nobody (decline); prepared 1 time(s) in this thread');
      expect(calls(s)[1]!.params).toMatchObject({ inputResponses: expect.any(Object) });
      expect(Object.values(calls(s)[1]!.params!.inputResponses as object)).toEqual([{ action: 'decline' }]);
      expect(await serverStats(s)).toMatchObject({ completed: 1, cancelled: 0, inputRetries: 1 });
    },
    TEST_MS,
  );

  it(
    "aborted while the handler asks the user: its signal fires, the caller rejects at once, no retry leaves (not even with the handler's late answer); the parked job is cancelled by the server",
    async () => {
      let handlerAborted: unknown;
      let asked = false;
      const s = await start(kind, (_params, { signal }) => {
        asked = true;
        // A user who answers only once the call was aborted: that answer must not go back as a retry.
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
      const call = s.client.callTool(greet(), { signal: stop.signal, timeout: 60_000 }).catch((e: unknown) => e);
      await until(() => asked, 30_000, 'the handler to be asked');
      stop.abort('user closed the dialog');
      const error = (await call) as CallAbortedError;
      expect(error).toBeInstanceOf(CallAbortedError);
      expect(error).toMatchObject({ name: 'AbortError', reason: 'user closed the dialog', cancelSent: false });
      await until(() => handlerAborted !== undefined, 10_000, 'the handler to see the abort');
      // The first round was answered: nothing of it to cancel, and no retry after the abort.
      // The wait's cancel is counted when it wins; the slot is free once the worker returned from the stage: wait for both.
      await until(
        async () => {
          const st = await serverStats(s);
          return st.inputWaitsExpired === 1 && st.inFlight === 0;
        },
        30_000,
        'the server to give up the wait and the job to stop',
      );
      expect(calls(s)).toHaveLength(1);
      expect(s.tap.cancelsSent()).toEqual([]);
      const st = await serverStats(s);
      expect(st).toMatchObject({
        inFlight: 0,
        cancelled: 1,
        completed: 0,
        inputRetries: 0,
        inputWaiting: 0,
        hardKilled: 0,
      });
      expect(s.client.stats()).toMatchObject({ cancelsSent: 0, pending: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "aborted while the retry runs: the retry's id is cancelled the era's way (stdio notifications/cancelled, HTTP its stream closed) and the job stops",
    async () => {
      const s = await start(kind, () => ({ action: 'accept', content: { name: 'Grace' } }));
      const stop = new AbortController();
      const call = s.client.callTool(greet(60_000), { signal: stop.signal, timeout: 120_000 }).catch((e: unknown) => e);
      await until(() => calls(s).length === 2, 30_000, 'the retry to leave');
      await until(
        async () => (await serverStats(s)).inputRetries === 1 && (await serverStats(s)).inFlight === 1,
        30_000,
        'the resumed job to run',
      );
      stop.abort('user pressed stop');
      const error = (await call) as CallAbortedError;
      const retryId = calls(s)[1]!.id;
      expect(error).toMatchObject({ name: 'AbortError', cancelSent: true, requestId: retryId });
      const cancels = s.tap.cancelsSent();
      if (kind === 'stdio') expect(cancels.map((m) => m.params?.requestId)).toEqual([retryId]);
      else expect(cancels).toEqual([]); // 2026 HTTP: the retry's stream closed is the cancellation
      await until(async () => (await serverStats(s)).inFlight === 0, 30_000, 'the work to stop');
      expect(await serverStats(s)).toMatchObject({ cancelled: 1, completed: 0, hardKilled: 0, inputRetries: 1 });
      expect(calls(s)).toHaveLength(2);
      expect(s.tap.responsesFor(retryId)).toEqual([]);
      expect(s.client.stats()).toMatchObject({ cancelsSent: 1, staleCancelsSuppressed: 0, pending: 0 });
      expect(s.errors).toEqual([]);
    },
    TEST_MS,
  );
});
