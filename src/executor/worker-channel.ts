/**
 * One job's link to its worker while it runs: the port for progress, logs
 * and the tool's requests to the client (opened only when someone listens),
 * and the rule that reports reach their listener only while the job may
 * still answer, all of them before its outcome.
 */
import type { ClientRequestMethod, ToolDefinition } from '../stages/tool.js';
import type { StartOptions } from '../backend/backend.js';
import { ReportTurn } from '../backend/calls.js';
import { JobChannel } from '../pool/job-channel.js';
import type { JobReports, ReportMessage } from '../pool/protocol.js';
import type { JobStateName } from '../state/job-state.js';

/** What the channel needs from its job. */
export interface ChannelOwner {
  /** The job's current state (reports are handed on only while `running` or `responding`). */
  readonly state: JobStateName;
  /** Fires when the job stops; passed to the client-request handler. */
  stopSignal(): AbortSignal;
}

/** The executor's counters a channel moves. */
export interface ChannelCounters {
  reportsReceived: number;
  reportsDiscarded: number;
  logsDropped: number;
}

/** Whether a job needs a live port to its worker: progress, a tool that talks to the client, or logs as they come. */
export function wantsPort(tool: ToolDefinition, options: StartOptions): boolean {
  return (
    options.onProgress !== undefined ||
    tool.usesClient === true ||
    (options.liveLogs === true && options.onLog !== undefined)
  );
}

export class WorkerChannel {
  /** Undefined when nobody listens: the worker then carries its logs in the outcome. */
  readonly port: JobChannel | undefined;
  /** A report was handed on in the current event-loop turn (cleared by an immediate). */
  private readonly turn = new ReportTurn();

  constructor(
    tool: ToolDefinition,
    private readonly options: StartOptions,
    private readonly owner: ChannelOwner,
    private readonly counters: ChannelCounters,
  ) {
    const { onClientRequest } = options;
    this.port = wantsPort(tool, options)
      ? new JobChannel({
          report: (message) => this.report(message),
          ...(onClientRequest && {
            request: (method: ClientRequestMethod, params: Record<string, unknown>) =>
              onClientRequest(method, params, owner.stopSignal()),
          }),
        })
      : undefined;
  }

  /**
   * Before the outcome: the reports the worker posted (they may still be on
   * their way, on another channel than the outcome), then those it carried
   * in the outcome. Waits only if some are still on their way, and never for
   * a stopped job, whose reports are all discarded.
   */
  async drain(reports: JobReports | undefined, stopped: boolean): Promise<void> {
    if (reports) {
      this.counters.logsDropped += reports.logsDropped ?? 0;
      const pending = stopped ? undefined : this.port?.caughtUp(reports.posted);
      if (pending) await pending;
      for (const message of reports.tail ?? []) this.report(message);
    }
    // A report handed on in this turn must leave before the response (typescript-sdk#2580).
    await new Promise<void>((resolve) => this.turn.then(resolve));
    this.port?.close();
  }

  /** Hands a report on while the job may still answer (running, or its response claimed but not yet sent). */
  private report(message: ReportMessage): void {
    this.counters.reportsReceived++;
    const state = this.owner.state;
    if (state !== 'running' && state !== 'responding') {
      this.counters.reportsDiscarded++;
      return;
    }
    this.turn.mark();
    if (message.type === 'progress') {
      const { type: _type, ...report } = message;
      this.options.onProgress?.(report);
    } else {
      this.options.onLog?.(
        message.data === undefined
          ? { level: message.level, message: message.message }
          : { level: message.level, message: message.message, data: message.data },
      );
    }
  }
}
