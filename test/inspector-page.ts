/**
 * Driving the MCP Inspector 2.x web UI as a person does, through what the page shows (roles, labels, text),
 * waiting on the page's states, never on clocks. Only 127.0.0.1 is reachable from the page.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ERAS, type Era, type Inspector } from './inspector-helpers.js';

/** The counters of `executor://stats` this test reads. */
export interface Counters {
  completed: number;
  cancelled: number;
  failed: number;
  running: number;
  stopping: number;
  hardKilled: number;
  threads: number;
  tasksCreated: number;
  tasksCancelled: number;
  responsesDropped: number;
  unknownCancelsIgnored: number;
  lateCancelsIgnored: number;
}

/** Opens the Inspector's page in a fresh context; anything not on 127.0.0.1 (fonts, links) is refused. */
export async function openInspector(
  browser: Browser,
  inspector: Inspector,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1300 } });
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  page.setDefaultTimeout(60_000); // a bound on a hang; every wait below is on a state of the page
  await page.goto(inspector.url);
  return { context, page };
}

/** Flips the server's Connect switch and waits for the revision the Inspector negotiated; returns it. */
export async function connect(page: Page, era: Era): Promise<string> {
  const toggle = page.getByRole('switch', { name: /^Connect or disconnect/ });
  // The input is visually hidden (Mantine); a person clicks its track.
  await toggle.locator('xpath=..').locator('.mantine-Switch-track').click();
  const revision = page.getByText(/^MCP \d{4}-\d\d-\d\d$/);
  await revision.waitFor();
  const shown = (await revision.innerText()).replace(/^MCP /, '');
  if (shown !== ERAS[era])
    throw new Error(`the Inspector's ${era} era connected with revision ${shown}, not ${ERAS[era]}`);
  return shown;
}

/** Opens Tools, picks `spin`, fills its form and presses Execute Tool. */
export async function executeSpin(page: Page, ms: number, stageMs: number): Promise<void> {
  await page.getByRole('banner').getByText('Tools', { exact: true }).click();
  await page.getByRole('button', { name: /\bspin$/ }).click();
  await page.getByRole('textbox', { name: 'ms', exact: true }).fill(String(ms));
  await page.getByRole('textbox', { name: 'stageMs', exact: true }).fill(String(stageMs));
  await page.getByRole('button', { name: 'Execute Tool' }).click();
}

/** Waits for the first progress the server reported ("slice N/M"): the work is running on a worker. */
export async function waitForProgress(page: Page): Promise<string> {
  const progress = page.getByText(/^slice \d+\/\d+/).first();
  await progress.waitFor();
  return progress.innerText();
}

/** Opens the monitoring sidebar's tab `name` (Tasks, Logs, Protocol). */
async function monitor(page: Page, name: string): Promise<void> {
  await page.getByRole('radiogroup', { name: 'Monitoring screen' }).getByText(name, { exact: true }).click();
}

/** Waits until the Tasks monitor lists one active task that is `working` (a 2026 call the server made a task). */
export async function waitForWorkingTask(page: Page): Promise<void> {
  await monitor(page, 'Tasks');
  await page.getByRole('heading', { name: 'Active (1)' }).waitFor();
  await page.getByText('working', { exact: true }).waitFor();
}

/** Presses the tool's Cancel button and waits until the form can run a tool again. */
export async function pressCancel(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  await page.getByRole('button', { name: 'Execute Tool' }).and(page.locator(':enabled')).waitFor();
}

/** Waits until the Tasks monitor shows the task ended `cancelled`. */
export async function waitForCancelledTask(page: Page): Promise<void> {
  await monitor(page, 'Tasks');
  await page.getByRole('heading', { name: 'Completed (1)' }).waitFor();
  await page.getByText('cancelled', { exact: true }).waitFor();
}

/** What the Protocol monitor shows of the call: its outcome (Pending, OK, Error) and the cancel messages sent. */
export interface ProtocolView {
  /** The status label of the `tools/call` entry. */
  toolsCall: string | undefined;
  /** Client-to-server `notifications/cancelled` entries. */
  cancelledNotifications: number;
  /** `tasks/cancel` requests. */
  taskCancels: number;
}

/** Reads the Protocol monitor (its accessibility tree: one line per label). */
export async function protocolView(page: Page): Promise<ProtocolView> {
  await monitor(page, 'Protocol');
  await page.getByRole('heading', { name: 'Messages' }).waitFor();
  const tree = await page.getByRole('main').ariaSnapshot();
  return {
    toolsCall: /(Pending|OK|Error|Cancelled)\s+tools\/call\b/.exec(tree)?.[1],
    cancelledNotifications: [...tree.matchAll(/client → server\s+notifications\/cancelled/g)].length,
    taskCancels: [...tree.matchAll(/\btasks\/cancel\b/g)].length,
  };
}

/** Opens Resources → Executor counters and reads `executor://stats` from the preview (a JSON editor). */
async function readCounters(page: Page, refresh: boolean): Promise<Counters> {
  if (refresh) await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  // The preview is one of several JSON editors on the page (the monitors have their own): take the one that
  // holds the counters.
  const texts = await page.locator('.ace_text-layer').filter({ hasText: '"hardKilled"' }).allInnerTexts();
  for (const text of texts) {
    try {
      const value = JSON.parse(text) as Partial<Counters>;
      if (typeof value.hardKilled === 'number' && typeof value.cancelled === 'number') return value as Counters;
    } catch {
      // not the preview (a protocol entry, or a preview still being drawn)
    }
  }
  throw new Error('no executor://stats preview on the page');
}

/**
 * Reads `executor://stats` through the Inspector until `settled` holds (refreshing, as a person would),
 * within `boundMs`; returns the counters that satisfied it.
 */
export async function statsUntil(page: Page, settled: (c: Counters) => boolean, boundMs = 60_000): Promise<Counters> {
  await page.getByRole('banner').getByText('Resources', { exact: true }).click();
  await page.getByRole('button', { name: 'Executor counters' }).click();
  await page.getByText('executor://stats', { exact: true }).first().waitFor();
  const end = Date.now() + boundMs;
  let last: Counters | Error;
  for (let refresh = false; ; refresh = true) {
    last = await readCounters(page, refresh).catch((e: Error) => e);
    if (!(last instanceof Error) && settled(last)) return last;
    if (Date.now() > end)
      throw new Error(
        `executor://stats never settled within ${boundMs} ms; last read: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await page.waitForTimeout(250); // the refresh cadence, not an assertion
  }
}
