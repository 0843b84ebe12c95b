/** `serve --redis URL [--queue NAME]`: the front end puts each call on a shared queue instead of its local pool. */
import { resolve } from 'node:path';
import type { CallBackend } from '../backend/backend.js';
import { Executor } from '../executor/executor.js';
import { QueueBackend } from '../remote/queue-backend.js';

/** The flags the backend choice reads. */
export interface BackendFlags {
  redis?: string;
  queue: string;
  tools: string[];
  builtins: boolean;
}

/** The queue backend, or undefined without --redis (the local pool stays the default). */
export async function openQueueBackend(flags: BackendFlags): Promise<QueueBackend | undefined> {
  if (flags.redis === undefined) return undefined;
  return QueueBackend.create({ redisUrl: flags.redis, queue: flags.queue, toolModules: flags.tools.map((m) => resolve(m)), builtins: flags.builtins });
}

/** How the log line names where calls run. */
export function describeBackend(backend: CallBackend, flags: BackendFlags): string {
  if (backend instanceof Executor) {
    const priority = backend.toolPriority.priority;
    return `${backend.threads} worker thread${backend.threads === 1 ? '' : 's'} (+${backend.spareThreads} standby${priority === 'normal' ? '' : `, priority ${priority}`})`;
  }
  return `calls queued on Redis ${flags.redis} (queue '${flags.queue}') for worker hosts`;
}
