/**
 * Baseline (d), the MCP side: the SDK server puts each spin call on a BullMQ
 * queue and waits for it with QueueEvents; the SDK's `extra.signal` removes a
 * waiting job, or publishes the job id for the worker's cancel relay.
 *
 *   node dist/bench/baselines/bullmq-front.js --redis URL --queue NAME
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

await serveBaseline({
  name: 'baseline-bullmq',
  counters,
  run: async (args, extra) => {
    const job = await queue.add('spin', args, { removeOnComplete: true, removeOnFail: true });
    const onAbort = () => {
      void pub.publish(`${name}:cancel`, job.id!);
      void job.remove().catch(() => undefined); // still waiting: it never starts (running: locked, the relay stops it)
    };
    extra.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return (await job.waitUntilFinished(events)) as never;
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
    }
  },
  close: async () => {
    await Promise.all([queue.close(), events.close()]);
    pub.disconnect();
  },
});
