/**
 * A worker host's side of a stage's `ctx.requestClient`. The client is
 * reachable only from the front end that owns the call, so the ask leaves as
 * a report on that front end's channel (`t: 'q'`, signed, published only
 * while this host holds the job) and waits for the front end's reply on the
 * hosts' reply channel (`REPLY` in ask-lua.ts; signed too, and refused here
 * when it does not verify). Both are kept in the job's hash too: an ask
 * message the front end missed is found by its probe (`q:<ask>`, there
 * until replied or withdrawn), a reply message this host missed at its
 * once-a-second check (`r:<ask>`).
 *
 * A task's job outlives its front end, and so do its questions once that
 * front end kept them in Redis (task-input-store.ts): any front end answers
 * them, and the host takes a verified reply whoever sent it. An ask that
 * front end never kept (it died first) is refused at the check once its
 * liveness key is gone.
 *
 * Never an unbounded wait: the job's stop (a cancel, its deadline, its front
 * end gone, its state lost) aborts the ask here and tells the front end
 * (`t: 'x'`), which aborts its side; the front end ends its side when the
 * call stops there (a cancel, --input-wait-ms for a parked 2026 call).
 */
import { randomBytes } from 'node:crypto';
import type { ClientRequestHandler } from '../../backend/backend.js';
import { abortableAsk, type AnswerAsk, type RefuseAsk } from '../../asks/questions.js';
import type { ClusterKey } from '../config/cluster-key.js';
import type { HostJob } from './host-job.js';
import type { JobStates } from '../lua/job-states.js';
import { taskOfJob } from '../keys.js';
import { parseHostReply, type FrontMessage, type HostReply } from '../messages.js';

interface Pending {
  readonly answer: AnswerAsk;
  readonly refuse: RefuseAsk;
}

/** This host's counters of asks (published with its other counters). */
export interface HostAskStats {
  /** Asks of the client relayed to their front end. */
  asksRelayed: number;
  /** Replies that did not verify against the cluster key (forged or altered): dropped, the ask waits on. */
  repliesRefused: number;
}

export class HostAsks {
  readonly stats: HostAskStats = { asksRelayed: 0, repliesRefused: 0 };
  /** Asks waiting for their reply: job id → ask id → its answerer. */
  private readonly pending = new Map<string, Map<string, Pending>>();

  constructor(
    private readonly states: JobStates,
    private readonly key: ClusterKey | undefined,
    /** Signs a message for the front end (as the host signs its reports). */
    private readonly sign: (message: FrontMessage) => string,
    /** Told of each refused reply (the host logs, rate-limited). */
    private readonly refused: (jobId: string) => void,
  ) {}

  /** The `onClientRequest` of `job`'s local run. */
  handler(job: HostJob): ClientRequestHandler {
    return (method, params, signal) => {
      const a = randomBytes(9).toString('base64url'); // one per ask: a reply to another ask, or an old one, never fits
      let asks = this.pending.get(job.jobId);
      if (!asks) this.pending.set(job.jobId, (asks = new Map<string, Pending>()));
      const mine = asks;
      const asked = abortableAsk(
        signal,
        `${method} not needed: the job stopped`,
        (answer, refuse) => mine.set(a, { answer, refuse }),
        () => {
          if (!this.take(job.jobId, a)) return false;
          void this.states
            .withdrawAsk(job.jobId, job.front, job.token, a, this.sign({ j: job.jobId, t: 'x', a }))
            .catch(() => undefined);
          return true;
        },
      );
      if (mine.has(a)) {
        this.stats.asksRelayed++;
        this.states
          .ask(job.jobId, job.front, job.token, a, this.sign({ j: job.jobId, t: 'q', a, q: { method, params } }))
          .then(
            (sent) =>
              sent ||
              this.settle({ j: job.jobId, a, e: `${method} was not relayed: the job no longer runs on this host` }),
            () => this.settle({ j: job.jobId, a, e: `${method} was not relayed: Redis failed` }),
          );
      }
      return asked;
    };
  }

  /** A message on the reply channel. */
  onReply(text: string): void {
    const reply = parseHostReply(text, this.key);
    if (reply === 'unverified') {
      this.stats.repliesRefused++;
      this.refused(jobOf(text));
      return;
    }
    if (reply) this.settle(reply);
  }

  /**
   * The check: replies kept in Redis for the job's open asks, in case their
   * message was missed; and a task's asks that reached nobody (its front end
   * died before keeping them in Redis) are refused, not waited on.
   */
  async recover(jobId: string): Promise<void> {
    const asks = this.pending.get(jobId);
    if (!asks || asks.size === 0) return;
    const texts = await this.states.replies(jobId, [...asks.keys()]);
    for (const text of texts) if (text !== null) this.onReply(text);
    const taskId = taskOfJob(jobId);
    if (taskId === undefined || asks.size === 0) return;
    for (const a of await this.states.stranded(jobId, taskId, [...asks.keys()])) {
      this.settle({
        j: jobId,
        a,
        e: "the question was not relayed: the front end that relayed this task's questions is gone, and died before it kept this one in Redis, so no front end can show it",
      });
    }
  }

  /** The job left this host: nothing of it waits any more (its stop signal already rejected its asks). */
  ended(jobId: string): void {
    this.pending.delete(jobId);
  }

  private settle(reply: HostReply): void {
    const p = this.take(reply.j, reply.a);
    if (!p) return; // not ours, or answered, or withdrawn
    void this.states.dropAsk(reply.j, reply.a).catch(() => undefined); // no front end need find it any more
    if ('r' in reply) p.answer(reply.r);
    else p.refuse(new Error(reply.e));
  }

  private take(jobId: string, a: string): Pending | undefined {
    const asks = this.pending.get(jobId);
    const p = asks?.get(a);
    if (p) asks!.delete(a);
    return p;
  }
}

function jobOf(text: string): string {
  try {
    return String((JSON.parse(text) as { j?: unknown }).j).slice(0, 80);
  } catch {
    return '?';
  }
}
