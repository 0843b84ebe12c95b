/**
 * Baseline (d), the MCP side: the SDK server puts each spin call on a BullMQ
 * queue and waits for it with QueueEvents; the SDK's `extra.signal` removes a
 * waiting job, or publishes the job id for the worker's cancel relay.
 *
 *   node dist-dev/bench/baselines/bullmq-front.js --redis URL --queue NAME
 */
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { serveBaseline, type BaselineCounters } from './common.js';
import type { SpinArgs } from './spin-body.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`missing ${name}`);
  return process.argv[i + 1]!;
};
const url = arg('--redis');
const name = arg('--queue');
const counters: BaselineCounters = { stopped: 0, completed: 0, cancelledCalls: 0 };
const queue = new Queue<SpinArgs>(name, { connection: { url } });
const events = new QueueEvents(name, { connection: { url } });
const pub = new Redis(url);
await events.waitUntilReady();
// Waiters by job id, registered before the job is added: a finished job is removed at once (removeOnComplete).
const waiters = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
events.on('completed', ({ jobId, returnvalue }) => waiters.get(jobId)?.resolve(returnvalue));
events.on('failed', ({ jobId, failedReason }) => waiters.get(jobId)?.reject(new Error(failedReason)));
let next = 0;

await serveBaseline({
  name: 'baseline-bullmq',
  counters,
  run: async (args, extra) => {
    const jobId = `d-${++next}`;
    const finished = new Promise((resolve, reject) => waiters.set(jobId, { resolve, reject }));
    const onAbort = () => {
      void pub.publish(`${name}:cancel`, jobId);
      void queue.remove(jobId).catch(() => undefined); // still waiting: it never starts (running: locked, the relay stops it)
      waiters.get(jobId)?.reject(new Error('cancelled'));
    };
    extra.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await queue.add('spin', args, { jobId, removeOnComplete: true, removeOnFail: true });
      return (await finished) as never;
    } finally {
      waiters.delete(jobId);
      extra.signal.removeEventListener('abort', onAbort);
    }
  },
  close: async () => {
    await Promise.all([queue.close(), events.close()]);
    pub.disconnect();
  },
});
