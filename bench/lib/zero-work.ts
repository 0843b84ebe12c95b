/**
 * What the two zero-work scenarios share (overhead: each server alone, in
 * turn; overhead-paired: ours and a baseline at once): the cores, the
 * parameters, the closed loop that measures a window, and the start and
 * warm-up of the servers.
 */
import { RawConnection } from './raw-client.js';
import type { ServerSpec } from './servers.js';
import { us } from '#dist/src/probe/stats.js';

export const THREADS = 2;
export const CLIENT_CPU = '0';
export const SERVER_CPU = '1';

export interface ZeroWorkParams {
  rounds: number;
  windowMs: number;
  warmupMs: number;
  /** The warm-up also lasts until this many calls: ours has more code to JIT-compile, which a loaded machine's compiler threads finish later. */
  warmupCalls: number;
}

/** A quick (smoke) run's parameters, or a full run's with `rounds` windows of `windowMs`. */
export function zeroWorkParams(quick: boolean, rounds: number, windowMs: number): ZeroWorkParams {
  return quick
    ? { rounds: 1, windowMs: 250, warmupMs: 200, warmupCalls: 0 }
    : { rounds, windowMs, warmupMs: 1500, warmupCalls: 20_000 };
}

/**
 * The order of the servers' windows in round `round`: the first one further on each round, and every other round
 * backwards, so that each server follows two different ones (a plain rotation keeps every server behind the same
 * one for the whole run: whatever that one leaves behind, a busy heap or cold caches, would always land on it).
 */
export function windowOrder(round: number, servers: number): number[] {
  const first = round % servers;
  return Array.from({ length: servers }, (_, i) => (round % 2 === 0 ? first + i : first - i + servers) % servers);
}

/** Closed loop: `inFlight` callers, each sending its next call when the last one is answered, for `windowMs`. */
export async function throughput(conn: RawConnection, inFlight: number, windowMs: number, latencies?: number[]) {
  let calls = 0;
  const cpu0 = conn.cpuTimes();
  const client0 = process.cpuUsage();
  const start = performance.now();
  const end = start + windowMs;
  let last = start;
  const caller = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await conn.callSpin({ ms: 0 });
      last = performance.now();
      calls++;
      latencies?.push(us(last - t0));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, caller));
  const cpu1 = conn.cpuTimes();
  const client = process.cpuUsage(client0);
  return {
    calls,
    seconds: (last - start) / 1000,
    ...(cpu0 &&
      cpu1 && { serverCpuMs: cpu1.processMs - cpu0.processMs, serverMainCpuMs: cpu1.mainThreadMs - cpu0.mainThreadMs }),
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

/**
 * Starts every server at once (start-up is module loading; the two cores share it), pinned to `cpus` when given,
 * into `conns` (so the caller closes whatever started), then warms each in turn, untimed, at 32 in flight: the
 * server and this client JIT-compile their hot paths under load.
 */
export async function openAndWarm(
  specs: readonly ServerSpec[],
  cpus: string | undefined,
  p: ZeroWorkParams,
  conns: RawConnection[],
): Promise<void> {
  const opened = await Promise.allSettled(specs.map((spec) => RawConnection.open(spec, cpus)));
  for (const r of opened) if (r.status === 'fulfilled') conns.push(r.value);
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const c of conns) await c.warm();
  for (const c of conns)
    for (let n = (await throughput(c, 32, p.warmupMs)).calls; n < p.warmupCalls;)
      n += (await throughput(c, 32, 250)).calls;
}
