/**
 * The main thread's end of one job's MessagePort: reports (progress, logs)
 * and the tool's requests to the client. The port and Piscina's result
 * channel are not ordered with each other, so the job's outcome may arrive
 * before reports the worker posted earlier; {@link JobChannel.caughtUp} lets
 * the job hold its outcome until they are in.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { ClientAsk, MainMessage, ReportMessage, WorkerMessage } from './protocol.js';
import type { ClientRequestMethod } from '../stages/tool.js';

/** What the channel hands on. */
export interface JobChannelHandlers {
  /** A report, in the order the worker posted it. */
  readonly report: (message: ReportMessage) => void;
  /** Answers a stage's request to the client; absent: such requests fail. */
  readonly request?: (method: ClientRequestMethod, params: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export class JobChannel {
  /** Transferred to the worker with the task. */
  readonly workerPort: MessagePort;
  private readonly port: MessagePort;
  private received = 0;
  private waiter: { readonly count: number; readonly resolve: () => void } | undefined;
  private ended = false;

  constructor(private readonly handlers: JobChannelHandlers) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.workerPort = port2;
    port1.on('message', (message: WorkerMessage) => this.onMessage(message));
    // A worker that died cannot send the rest: never wait for it.
    port1.once('close', () => {
      this.ended = true;
      this.release();
    });
  }

  /**
   * Undefined if `posted` reports have arrived already (no extra turn for the
   * common case); otherwise settles once they have, or once the worker's end closed.
   */
  caughtUp(posted: number): Promise<void> | undefined {
    if (this.received >= posted || this.ended) return undefined;
    return new Promise((resolve) => (this.waiter = { count: posted, resolve }));
  }

  close(): void {
    this.ended = true;
    this.release();
    this.port.close();
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type !== 'requests') {
      this.received++;
      this.handlers.report(message);
      if (this.waiter && this.received >= this.waiter.count) this.release();
      return;
    }
    // In order, in this one turn: a round cut after it sees every ask of the job's turn.
    for (const ask of message.asks) this.request(ask);
  }

  private request({ rid, method, params }: ClientAsk): void {
    const reply = (m: MainMessage) => {
      try {
        this.port.postMessage(m);
      } catch {
        /* the job ended; its port is closed */
      }
    };
    if (!this.handlers.request) {
      reply({ type: 'error', rid, message: 'no client channel for this job' });
      return;
    }
    this.handlers
      .request(method, params)
      .then((result) => reply({ type: 'response', rid, result }))
      .catch((error: unknown) =>
        reply({ type: 'error', rid, message: error instanceof Error ? error.message : String(error) }),
      );
  }

  private release(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }
}
