/**
 * Baseline (d), the worker side: what people write by hand with BullMQ. A
 * plain BullMQ Worker whose processor runs the same spin loop on the main
 * thread, yielding between slices so BullMQ's AbortSignal can fire; a pub/sub
 * subscriber relays each cancel to `worker.cancelJob`. Concurrency 1.
 *
 *   node dist-dev/bench/baselines/bullmq-worker.js --redis URL --queue NAME
 */
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { spinResult, spinYielding, type SpinArgs } from './spin-body.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`missing ${name}`);
  return process.argv[i + 1]!;
};
const url = arg('--redis');
const queue = arg('--queue');
const cmd = new Redis(url, { maxRetriesPerRequest: null });
const sub = new Redis(url, { maxRetriesPerRequest: null });

const worker = new Worker<SpinArgs>(
  queue,
  async (job, _token, signal) => {
    try {
      return spinResult(
        await spinYielding(job.data, () => {
          if (signal?.aborted) throw new UnrecoverableError('cancelled');
        }),
      );
    } catch (error) {
      // The work has stopped: tell the bench at once (it polls this key).
      if (signal?.aborted) await cmd.incr(`${queue}:stopped`);
      throw error;
    }
  },
  { connection: { url, maxRetriesPerRequest: null }, concurrency: 1 },
);
worker.on('error', (e) => process.stderr.write(`[baseline-bullmq-worker] ${e.message}\n`));
sub.on('message', (_channel: string, jobId: string) => worker.cancelJob(jobId, 'cancelled by the client'));
await sub.subscribe(`${queue}:cancel`);
await worker.waitUntilReady();
process.stderr.write(`[baseline-bullmq-worker] serving queue '${queue}'\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void worker.close(true).finally(() => process.exit(0)));
