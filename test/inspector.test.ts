/**
 * The way people press Cancel: the MCP Inspector 2.x web UI in headless Chromium
 * (Debian's /usr/bin/chromium, driven by playwright-core), connected to our server over stdio and over
 * Streamable HTTP, in both of its protocol eras. Each run calls `spin` for a minute of CPU, presses Cancel once
 * the server reports progress, and reads `executor://stats` through the Inspector until the work has stopped:
 * the call was cancelled, nothing completed and no thread was killed. Screenshots go to test-output/inspector/.
 *
 * How the Inspector cancels follows the era, the transport and what the server made of the call:
 * - 2025-11-25 (`--protocol-era legacy`): `notifications/cancelled` on stdio and as an HTTP POST.
 * - 2026-07-28 (`modern`): the Inspector declares the tasks extension, so with our default `--task-after-ms`
 *   a minute-long call becomes a task and Cancel sends `tasks/cancel`. With the task threshold out of reach
 *   the call stays a request: `notifications/cancelled` on stdio, and on HTTP the closed response stream.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, until } from './helpers.js';
import { listening } from './http-helpers.js';
import {
  cancelsBySource,
  ERAS,
  freePort,
  INSPECTOR_VERSION,
  processesWith,
  recordingProxy,
  startInspector,
  type Era,
  type Inspector,
  type Target,
  type WireEvent,
} from './inspector-helpers.js';
import {
  connect,
  executeSpin,
  openInspector,
  pressCancel,
  protocolView,
  statsUntil,
  waitForCancelledTask,
  waitForProgress,
  waitForWorkingTask,
  type Counters,
  type ProtocolView,
} from './inspector-page.js';

const OUTPUT = join(process.cwd(), 'test-output', 'inspector');
const SPIN_MS = 60_000; // a minute of CPU; Cancel is pressed as soon as it runs
const STAGE_MS = 10;
/** A bound on one run (server, Inspector, browser page), far above what it takes on a loaded machine. */
const RUN_BOUND_MS = 150_000;
/** One worker thread (and the default one warm standby): a killed thread would show in `threads` too. */
const SERVER_ARGS = ['--threads', '1'];
/** Keeps a 2026 call a plain request: it would become a task only after 10 minutes. */
const NO_TASKS = ['--task-after-ms', '600000'];

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  await mkdir(OUTPUT, { recursive: true });
  console.log(`Inspector ${INSPECTOR_VERSION} on Node ${process.version}; screenshots in ${OUTPUT}`);
}, 200_000);

afterAll(async () => {
  await browser?.close();
});

/** Who asked for the cancels that won, read from the server's /metrics once one has. */
type Sources = () => Promise<Record<string, number>>;

/** What a run can check besides the page: the server's cancel sources, and over HTTP the wire itself. */
interface Evidence {
  sources: Sources;
  /** HTTP only: what a recording proxy between the Inspector and the server saw. */
  wire?: WireEvent[];
}

/** The id of the `tools/call` the Inspector sent, and the POSTs that carried a `notifications/cancelled` for it. */
function onTheWire(events: WireEvent[]): {
  callId: unknown;
  cancelNotifications: number;
  call: WireEvent['kind'][];
  taskCancels: number;
} {
  const callId = events
    .find((e) => e.kind === 'request' && e.messages.some((m) => m.method === 'tools/call'))
    ?.messages.find((m) => m.method === 'tools/call')?.id;
  const requests = events.filter((e) => e.kind === 'request').flatMap((e) => e.messages);
  return {
    callId,
    cancelNotifications: requests.filter((m) => m.method === 'notifications/cancelled' && m.requestId === callId)
      .length,
    // How the POST that carried the call ended: answered, or dropped by the client.
    call: events
      .filter((e) => e.kind !== 'request' && e.messages.some((m) => m.method === 'tools/call'))
      .map((e) => e.kind),
    taskCancels: requests.filter((m) => m.method === 'tasks/cancel').length,
  };
}

/**
 * One server (over `transport`, with `args`) and one Inspector (in `era`); `body` drives the page. The server's
 * metrics say how each cancel reached it: on its HTTP port, or over stdio on a --health-port of its own.
 */
async function withInspector(
  transport: 'stdio' | 'http',
  era: Era,
  args: string[],
  body: (page: Page, evidence: Evidence) => Promise<void>,
): Promise<void> {
  const server = transport === 'http' ? await listening([...SERVER_ARGS, ...args]) : undefined;
  const proxy = server ? await recordingProxy(new URL('/mcp', server.url)) : undefined;
  const healthPort = server ? undefined : await freePort();
  const target: Target = proxy
    ? { kind: 'http', url: proxy.url }
    : {
        kind: 'stdio',
        command: process.execPath,
        args: [CLI, 'serve', ...SERVER_ARGS, '--health-port', String(healthPort), ...args],
      };
  const metricsOrigin = server ? server.url.origin : `http://127.0.0.1:${healthPort}`;
  const sources: Sources = async () => {
    let counted: Record<string, number> = {};
    await until(
      async () => Object.keys((counted = await cancelsBySource(metricsOrigin))).length > 0,
      30_000,
      'a cancel in /metrics',
    );
    return counted;
  };
  let inspector: Inspector | undefined;
  try {
    inspector = await startInspector(process.execPath, target, era);
    // Auth is on: without the token, or with another, the Inspector's API refuses (the page, given it, works).
    expect((await fetch(`${inspector.origin}/api/config`)).status).toBe(401);
    expect(
      (await fetch(`${inspector.origin}/api/config`, { headers: { 'x-mcp-remote-auth': `Bearer ${'0'.repeat(64)}` } }))
        .status,
    ).toBe(401);
    const { context, page } = await openInspector(browser, inspector);
    try {
      await body(page, { sources, ...(proxy && { wire: proxy.events }) });
      // The marker the stdio server's environment carries finds it while it runs, so the check after the stop
      // below can fail.
      if (transport === 'stdio') expect(await processesWith(inspector.marker)).toHaveLength(1);
    } catch (error) {
      await page.screenshot({ path: join(OUTPUT, `${transport}-${era}-failed.png`) }).catch(() => undefined);
      throw new Error(`${(error as Error).message}\n--- Inspector output ---\n${inspector.output()}`, { cause: error });
    } finally {
      await context.close();
    }
  } finally {
    await inspector?.stop();
    await proxy?.close();
    await server?.stop();
  }
  // The stdio server was the Inspector's child: it must be gone with it (it exits when its stdin closes).
  if (inspector && transport === 'stdio')
    await until(async () => (await processesWith(inspector.marker)).length === 0, 15_000, 'the stdio server to exit');
}

/** The work stopped: the server's worker is idle again, the call counted cancelled, no thread was killed. */
const stopped = (c: Counters) => c.running === 0 && c.stopping === 0 && c.cancelled + c.tasksCancelled >= 1;

async function shot(page: Page, name: string): Promise<void> {
  const path = join(OUTPUT, `${name}.png`);
  await page.screenshot({ path });
  console.log(`screenshot: ${path}`);
}

/** A call that stays a request: Cancel must stop it with no answer for it. */
async function cancelRequest(
  page: Page,
  era: Era,
  name: string,
): Promise<{ stats: Counters; wire: ProtocolView; progress: string }> {
  expect(await connect(page, era)).toBe(ERAS[era]);
  await executeSpin(page, SPIN_MS, STAGE_MS);
  const progress = await waitForProgress(page);
  await pressCancel(page);
  const stats = await statsUntil(page, stopped);
  const wire = await protocolView(page);
  await shot(page, name);
  return { stats, wire, progress };
}

describe(`MCP Inspector ${INSPECTOR_VERSION} web UI: press Cancel during spin`, () => {
  for (const transport of ['stdio', 'http'] as const) {
    it(
      `2025-11-25 over ${transport}: notifications/cancelled stops the work, no answer, no thread killed`,
      async () => {
        await withInspector(transport, 'legacy', [], async (page, { sources, wire: http }) => {
          const { stats, wire, progress } = await cancelRequest(page, 'legacy', `${transport}-2025-11-25`);
          expect(progress).toMatch(/^slice \d+\/6000/);
          expect(await sources()).toEqual({ notification: 1 });
          if (http) expect(onTheWire(http).cancelNotifications).toBe(1); // its own POST, naming the call
          expect(wire.cancelledNotifications).toBe(1);
          expect(wire.toolsCall).toBe('Pending'); // never answered
          expect(stats).toMatchObject({
            cancelled: 1,
            completed: 0,
            failed: 0,
            hardKilled: 0,
            running: 0,
            threads: 2,
            tasksCreated: 0,
          });
        });
      },
      RUN_BOUND_MS,
    );

    it(
      `2026-07-28 over ${transport}, a request: ${transport === 'http' ? 'the closed response stream' : 'notifications/cancelled'} stops the work, no answer, no thread killed`,
      async () => {
        await withInspector(transport, 'modern', NO_TASKS, async (page, { sources, wire: http }) => {
          const { stats, wire } = await cancelRequest(page, 'modern', `${transport}-2026-07-28-request`);
          if (http) {
            // On the wire: no cancel notification, and the call's response stream closed by the client.
            expect(onTheWire(http)).toMatchObject({ cancelNotifications: 0, call: ['dropped'] });
            // The exchange closing unanswered is the cancel, counted as a closed stream.
            expect(await sources()).toEqual({ closed_stream: 1 });
          } else expect(await sources()).toEqual({ notification: 1 });
          // 2026 HTTP: closing the stream is the cancel, and the Inspector sends no notification there.
          expect(wire.cancelledNotifications).toBe(transport === 'http' ? 0 : 1);
          expect(wire.toolsCall).toBe('Pending');
          expect(stats).toMatchObject({
            cancelled: 1,
            completed: 0,
            failed: 0,
            hardKilled: 0,
            running: 0,
            threads: 2,
            tasksCreated: 0,
          });
        });
      },
      RUN_BOUND_MS,
    );

    it(
      `2026-07-28 over ${transport}, the server's defaults: the call becomes a task and tasks/cancel stops it, no thread killed`,
      async () => {
        await withInspector(transport, 'modern', [], async (page, { sources, wire: http }) => {
          expect(await connect(page, 'modern')).toBe(ERAS.modern);
          await executeSpin(page, SPIN_MS, STAGE_MS);
          await waitForWorkingTask(page);
          await pressCancel(page);
          await waitForCancelledTask(page);
          const stats = await statsUntil(page, stopped);
          const wire = await protocolView(page);
          await shot(page, `${transport}-2026-07-28-task`);
          expect(wire.taskCancels).toBeGreaterThanOrEqual(1);
          expect(await sources()).toEqual({ tasks_cancel: 1 });
          if (http)
            expect(onTheWire(http)).toMatchObject({ cancelNotifications: 0, taskCancels: 1, call: ['answered'] });
          expect(wire.toolsCall).toBe('OK'); // answered with the task it became
          // Over stdio the Inspector may also send a notifications/cancelled after tasks/cancel (in some runs, not
          // others), for a request no longer in flight: the server ignores each one, and the one job cancelled is
          // the task's.
          console.log(
            `${transport}: ${wire.cancelledNotifications} notifications/cancelled beside tasks/cancel; ignored: ${stats.unknownCancelsIgnored} unknown, ${stats.lateCancelsIgnored} late`,
          );
          expect(stats.unknownCancelsIgnored + stats.lateCancelsIgnored).toBe(wire.cancelledNotifications);
          expect(stats).toMatchObject({
            tasksCreated: 1,
            tasksCancelled: 1,
            cancelled: 1,
            completed: 0,
            failed: 0,
            hardKilled: 0,
            running: 0,
            threads: 2,
          });
        });
      },
      RUN_BOUND_MS,
    );
  }
});
