/**
 * A real Redis Sentinel set for the failover tests: one primary, one replica
 * and three sentinels (quorum 2), all on 127.0.0.1 free ports, with their
 * configs in a temp dir (a sentinel rewrites its config file), passwords on
 * the data nodes and on the sentinels. Torn down after.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../bench/lib/free-port.js';
import { until } from './helpers.js';

export const INSTALL_SENTINEL = 'apt-get update && apt-get install -y redis-server redis-sentinel';
export const MASTER = 'mymaster';

/** A running Sentinel set. */
export interface SentinelSet {
  /** The ports of the two data nodes (which one is primary changes with failovers). */
  readonly dataPorts: readonly number[];
  readonly sentinelPorts: readonly number[];
  /** `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`: what `--redis-sentinels` takes. */
  readonly sentinelList: string;
  /** The primary's port as a sentinel reports it. */
  primaryPort(): Promise<number>;
  /** A client of the current primary, through the sentinels (closed by {@link SentinelSet.stop}). */
  client(): Redis;
  /** `SENTINEL FAILOVER mymaster` on the first sentinel. */
  failover(): Promise<void>;
  /** SIGKILLs the data node on this port. */
  kill(port: number): Promise<void>;
  /** Until every sentinel sees the primary, `replicas` replicas in sync and the two other sentinels. */
  settled(replicas: number, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

function spawnSentinel(conf: string): ChildProcess {
  // Debian's redis-sentinel is redis-server started as a sentinel; without it, ask redis-server directly.
  const own = !spawnSync('redis-sentinel', ['--version']).error;
  return own
    ? spawn('redis-sentinel', [conf], { stdio: 'ignore' })
    : spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
}

async function answers(port: number, password: string): Promise<void> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    password,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await until(
      async () => {
        try {
          if (probe.status !== 'ready') await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          return false;
        }
      },
      15_000,
      `redis on port ${port}`,
    );
  } finally {
    probe.disconnect();
  }
}

/** Starts the set; `password` guards the data nodes, `sentinelPassword` the sentinels. */
export async function startSentinelSet(password: string, sentinelPassword: string): Promise<SentinelSet> {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error(`redis-server is not installed; the Sentinel tests need it: ${INSTALL_SENTINEL}`);
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sentinel-'));
  const children = new Map<number, ChildProcess>();
  const clients: Redis[] = [];
  const dataPorts = [await freePort(), await freePort()];
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const [primary, replica] = dataPorts as [number, number];
  for (const port of dataPorts) {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--dbfilename',
      `dump-${port}.rdb`,
      '--save',
      '',
      '--appendonly',
      'no',
      '--requirepass',
      password,
      '--masterauth',
      password,
      '--repl-diskless-sync',
      'yes',
      '--repl-diskless-sync-delay',
      '0',
    ];
    if (port === replica) args.push('--replicaof', '127.0.0.1', String(primary));
    children.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
  }
  for (const port of dataPorts) await answers(port, password);
  for (const port of sentinelPorts) {
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `requirepass ${sentinelPassword}`,
        `sentinel sentinel-pass ${sentinelPassword}`,
        `sentinel monitor ${MASTER} 127.0.0.1 ${primary} 2`,
        `sentinel auth-pass ${MASTER} ${password}`,
        `sentinel down-after-milliseconds ${MASTER} 1000`,
        `sentinel failover-timeout ${MASTER} 4000`,
        `sentinel parallel-syncs ${MASTER} 1`,
        '',
      ].join('\n'),
    );
    children.set(port, spawnSentinel(conf));
  }
  for (const port of sentinelPorts) await answers(port, sentinelPassword);
  const sentinel = (port: number) => {
    const c = new Redis({
      port,
      host: '127.0.0.1',
      password: sentinelPassword,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 200,
    });
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  };
  const sentinels = sentinelPorts.map(sentinel);
  const masterInfo = async (s: Redis): Promise<Record<string, string>> => {
    const flat = (await s.call('SENTINEL', 'MASTER', MASTER)) as string[];
    const info: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) info[flat[i]!] = flat[i + 1]!;
    return info;
  };
  const set: SentinelSet = {
    dataPorts,
    sentinelPorts,
    sentinelList: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    async primaryPort() {
      const [, port] = (await sentinels[0]!.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER)) as [string, string];
      return Number(port);
    },
    client() {
      const c = new Redis({
        sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
        name: MASTER,
        password,
        sentinelPassword,
      });
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
    async failover() {
      await sentinels[0]!.call('SENTINEL', 'FAILOVER', MASTER);
    },
    async kill(port) {
      const child = children.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
    async settled(replicas, ms = 30_000) {
      await until(
        async () => {
          try {
            for (const s of sentinels) {
              const info = await masterInfo(s);
              if (info.flags !== 'master' || Number(info['num-other-sentinels']) !== 2) return false;
              const listed = (await s.call('SENTINEL', 'REPLICAS', MASTER)) as string[][];
              const up = listed.filter((r) => {
                const f: Record<string, string> = {};
                for (let i = 0; i + 1 < r.length; i += 2) f[r[i]!] = r[i + 1]!;
                return f.flags === 'slave' && f['master-link-status'] === 'ok';
              });
              if (up.length < replicas) return false;
            }
            return true;
          } catch {
            return false;
          }
        },
        ms,
        `the sentinels agreeing on ${MASTER} with ${replicas} replica(s) in sync`,
      );
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await Promise.all([...children.keys()].map((port) => set.kill(port)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return set;
}
