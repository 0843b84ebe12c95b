/**
 * `mcp-cancel-pool worker --redis URL`: a worker host. It takes tools/call
 * jobs from a BullMQ queue shared with `serve --redis` front ends and runs them
 * on its local worker-thread pool (see docs/many-hosts.md "Many hosts").
 */
import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULTS } from '../defaults.js';
import { RedisAuthError, RedisConfigError } from '../errors.js';
import { ClusterKey } from '../remote/config/cluster-key.js';
import { REDIS_URL_ENV } from '../remote/config/redis-config.js';
import type { WorkerHost } from '../remote/host/worker-host.js';
import { checkToolModule } from './tool-modules.js';
import { poolOptions, type PoolFlags } from './pool-options.js';
import { redisConfigOf, redisOptions, redisUrlOf, sentinelOf, type RedisFlags } from './redis-flags.js';
import { UsageError } from './usage-error.js';
import { withPeers } from '../peers.js';
import { RedisProbe, workerHostOps } from '../ops/ops.js';
import { serveHealth } from '../ops/health.js';
import { hostArg } from './config.js';
import { logger, type LogFormat, type LogLevel } from '../log/logger.js';
import { configureLogging, logOptions } from './log-options.js';
import { describeTelemetry, startTelemetry } from '../otel/sdk.js';

interface WorkerFlags extends PoolFlags, RedisFlags {
  drainTimeoutMs: number;
  healthPort?: number;
  healthHost: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected an integer >= 1');
  return n;
}

function healthPort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return n;
}

function log(message: string): void {
  logger().info(message);
}

/** Adds the `worker` command. */
export function registerWorker(program: Command): void {
  const worker = program
    .command('worker')
    .description(
      'Run a worker host: take tool calls from a Redis queue shared with `serve --redis` front ends (see docs/many-hosts.md "Many hosts").',
    )
    .option(
      '--drain-timeout-ms <ms>',
      'on SIGTERM/SIGINT, how long running jobs may finish; then they are stopped and handed back to other hosts (see docs/many-hosts.md "Many hosts")',
      (v: string) => (v === '0' ? 0 : positiveInt(v)),
      DEFAULTS.hostDrainTimeoutMs,
    )
    .option(
      '--threads <n>',
      'worker threads, also the jobs this host runs at once (default: available CPUs)',
      positiveInt,
    )
    .option(
      '--spare-threads <n>',
      'warm standby threads (see serve --spare-threads)',
      (v: string) => (v === '0' ? 0 : positiveInt(v)),
      1,
    )
    .option(
      '--tools <module>',
      'load tools from this module (repeatable); the same modules as the front ends',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--no-builtins', 'do not load the built-in tools')
    .option('--root <dir>', 'directory the file tools may read (hash_file, compress)', process.cwd())
    .addOption(
      new Option(
        '--tool-priority <class>',
        'normal, or idle: tool threads in SCHED_IDLE (Linux), so cancels and Redis replies preempt them at once; recommended on a host that is there for the tools (see docs/many-hosts.md "Many hosts")',
      )
        .choices(['normal', 'idle'])
        .default(DEFAULTS.toolPriority),
    )
    .option(
      '--grace-ms <ms>',
      'how long a cancelled call may run past its checkpoints before its worker thread is replaced',
      (v: string) => (v === '0' ? 0 : positiveInt(v)),
      1000,
    )
    .option(
      '--health-port <port>',
      'serve GET /healthz, /readyz and /metrics on this port (0 = any free port)',
      healthPort,
    )
    .option('--health-host <host>', 'with --health-port: interface to bind', hostArg, '127.0.0.1');
  logOptions(worker).action(async (flags: WorkerFlags) => {
    configureLogging(flags, 'mcp-cancel-pool worker');
    const redisUrl = redisUrlOf(flags);
    if (redisUrl === undefined)
      throw new UsageError(
        `worker needs Redis: give --redis <url>, --redis-url-file <path>, ${REDIS_URL_ENV} or --redis-sentinels <host:port,...>`,
      );
    for (const file of flags.tools) await checkToolModule(resolve(file));
    // Its jobs' spans join the front ends' traces (the context travels in the signed job).
    const telemetry = await startTelemetry('mcp-cancel-pool-worker', logger());
    // A SIGTERM while Redis is still away (the host waits for it at start) ends the process at once.
    const early = () => process.exit(0);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, early);
    let host: WorkerHost;
    try {
      // Loaded here, not at the CLI's start: every `serve` registers this command and must not load BullMQ for it.
      const { WorkerHost } = await withPeers(
        'worker',
        ['bullmq', 'ioredis'],
        () => import('../remote/host/worker-host.js'),
      );
      host = await WorkerHost.start({
        redisUrl,
        ...(sentinelOf(flags) && { redisSentinel: sentinelOf(flags)! }),
        ...(flags.redisCaFile !== undefined && { redisCaFile: flags.redisCaFile }),
        ...(flags.clusterKeyFile !== undefined && { clusterKey: ClusterKey.fromFile(flags.clusterKeyFile) }),
        queue: flags.queue,
        executor: poolOptions(flags),
      });
    } catch (error) {
      if (error instanceof RedisConfigError || error instanceof RedisAuthError) throw new UsageError(error.message);
      throw error;
    }
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, early);
    log(
      `host ${host.hostId} serving queue '${flags.queue}' on Redis ${host.redis.display} with ${host.executor.threads} thread${host.executor.threads === 1 ? '' : 's'} (priority ${host.executor.toolPriority.priority}); tools: ${[...host.executor.tools.keys()].join(', ')}`,
    );
    if (telemetry) log(describeTelemetry(telemetry));
    let stopping = false;
    if (flags.healthPort !== undefined) {
      const ops = workerHostOps({
        stats: () => host.executor.stats(),
        dropped: () => host.stats.dropped,
        tools: new Set(host.executor.tools.keys()),
        redis: new RedisProbe(redisConfigOf(flags)!, flags.queue),
        accepting: () => !stopping,
      });
      const health = await serveHealth(ops.handler(), flags.healthHost, flags.healthPort);
      log(`health and metrics on ${health.url}/healthz, /readyz, /metrics`);
    }
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        if (stopping) return;
        stopping = true;
        log(`shutting down (${signal}); running jobs may finish for ${flags.drainTimeoutMs} ms`);
        void host.close({ drainTimeoutMs: flags.drainTimeoutMs }).then((handedBack) => {
          if (handedBack > 0) log(`drain timeout: ${handedBack} running job(s) stopped and handed back to other hosts`);
          void (telemetry?.shutdown() ?? Promise.resolve()).then(() => process.exit(0));
        });
      });
    }
  });
  redisOptions(worker, {
    redis: 'Redis to take jobs from, e.g. redis://127.0.0.1:6379 (rediss:// for TLS)',
    queue: 'queue name (the same on the front ends)',
  });
}
