/** What the probe is told, and what it finds: the shapes shared by its parts and written to its JSON. */
import type { Summary } from './stats.js';
import type { Busy } from './cpu.js';

/**
 * A protocol revision the probe speaks: `2025` is 2025-11-25 (`initialize`,
 * `ping`, sessions), `2026` is 2026-07-28 (stateless, `server/discover`, no
 * `ping`; over HTTP a closed response stream is the cancel).
 */
export type Era = '2025' | '2026';

/** One server to probe. */
export type TargetSpec =
  | { readonly kind: 'stdio'; readonly command: string }
  | {
      readonly kind: 'http';
      readonly url: string;
      /** The server's process id, when known: enables the CPU checks. */ readonly pid?: number;
    };

/** How to probe (the CLI flags). */
export interface ProbeOptions {
  /** The long-running tool: cancelled while it runs. */
  readonly tool: string;
  /** @default {} */
  readonly args: Record<string, unknown>;
  /** A short tool, for "cancel → next call answered", the late cancel and the race storm. */
  readonly quickTool?: string;
  /** @default {} */
  readonly quickArgs: Record<string, unknown>;
  /** A tool to call as a task (2025-11-25 `task` param) and cancel with `tasks/cancel`; none: the tasks rules are left out. */
  readonly taskTool?: string;
  /** @default {} */
  readonly taskArgs: Record<string, unknown>;
  /** Cancelled long calls, each one latency/CPU sample. @default 5 */
  readonly samples: number;
  /** How long the long call runs before it is cancelled. @default 300 */
  readonly cancelAfterMs: number;
  /** How long after each cancel the probe watches for an answer and measures CPU. @default 1500 */
  readonly settleMs: number;
  /** How long after a notification-only case the probe watches for a reply. @default 300 */
  readonly quietMs: number;
  /** Complete-vs-cancel races with the quick tool. @default 30 */
  readonly storm: number;
  /**
   * Marker requests sent one after another behind each cancel. An answer or
   * progress for the cancelled request counts against the server only if it
   * arrived after the last marker's answer: the server had read the cancel
   * (it came before the first marker on the same stream) and then answered
   * this many requests before it sent it. @default 2
   */
  readonly markers: number;
  /** CPU the server may burn after a cancel (median over samples) before the work counts as going on (`cancel.work-stops` FAIL). @default 100 */
  readonly maxCpuAfterCancelMs: number;
  /** Bound on any single request the probe waits for (ping, quick call). @default 10000 */
  readonly timeoutMs: number;
  /** Bound on opening a connection, the server's start included (a loaded machine starts a process slowly). @default 60000 */
  readonly connectTimeoutMs: number;
}

/**
 * A rule's verdict. `inconclusive`: the rule could not be decided from what
 * the probe can see (e.g. `cancel.work-stops` for a tool that uses too little
 * CPU for CPU to show whether it stopped, and sent nothing after the cancel);
 * neither a pass nor a violation: the probe exits 3 when nothing failed but
 * a rule was inconclusive.
 */
export type Outcome = 'pass' | 'fail' | 'warn' | 'skip' | 'inconclusive';

/** One rule's result. */
export interface Verdict {
  /** A stable id, e.g. `cancel.no-answer`. */
  readonly rule: string;
  readonly title: string;
  readonly outcome: Outcome;
  /** What was seen, in a sentence or two. */
  readonly evidence: string;
}

/** One cancelled long call. */
export interface CancelSample {
  readonly requestId: number;
  /** When the cancel was sent (performance.now() of the probe). */
  readonly cancelAt: number;
  /** The call answered before its cancel was due: the long tool is too short for this sample. */
  readonly finishedBeforeCancel: boolean;
  /** ms from the cancel being sent to each message that answered the cancelled call (should be none). */
  answersAfterCancelMs: number[];
  /** The progress token the call carried. */
  readonly token: string;
  /** Wire stamp of the last marker's answer behind the cancel; undefined when a marker went unanswered (nothing can be judged by order). */
  readonly markersDoneAt?: number;
  /** Wire stamp of the end of the watch window. */
  readonly windowEnd: number;
  /** Wire stamp from which the cancelled call was the probe's only open request (the marker chain and the quick call answered); undefined if never. */
  readonly aloneFrom?: number;
  /** Messages for the call the server sent after it had read the cancel (see after-cancel.ts); filled in at the end of the run, like {@link answersAfterCancelMs}. */
  afterCancel: AfterCancelMessage[];
  /** ms from the cancel to the quick call's answer (slot reuse); undefined without a quick tool or if it timed out. */
  readonly nextCallMs?: number;
  /** Ping round trips measured while the long call ran (a ping unanswered at the end of the window counts its age). */
  readonly pingWhileRunningMs: number[];
  /** CPU the server's process tree used from the cancel to the end of the window (stdio or --pid only). */
  readonly cpuAfterCancelMs?: number;
  /** CPU it used from the call to the cancel (`--cancel-after-ms`). */
  readonly cpuBeforeCancelMs?: number;
  /** Runnable threads (state R) of the process tree just before the cancel. */
  readonly runnableAtCancel?: number;
  /** From a third of the window on, how busy the busiest thread of the tree was (the kernel's counts): runnable about all the time and rarely blocking for work that goes on, whatever the load. */
  readonly busyAfterCancel?: Busy;
  /** ms from the cancel until the process tree went idle; undefined if not measured; Infinity if still busy at the end. */
  readonly idleAfterCancelMs?: number;
  /** Progress notifications for the call that arrived after the marker chain was answered (see ordering.ts), and the last one's delay after the cancel. */
  readonly progressAfterCancel: number;
  readonly lastProgressAfterCancelMs?: number;
  /** Progress that arrived between the cancel and the last marker's answer: possibly sent before the server read the cancel. */
  readonly progressCrossed: number;
  /** Whether the marker chain behind the cancel was answered (false: a blocked server, nothing can be judged by order). */
  readonly markersAnswered: boolean;
}

/** A message for a cancelled call that the server sent after it had read the cancel: the work went on. */
export interface AfterCancelMessage {
  /** `answer`: a result, or an error that does not say the call was cancelled; `progress`: a progress notification with the call's token; `log`: `notifications/message`; `request`: a request to the client. */
  readonly kind: 'answer' | 'progress' | 'log' | 'request';
  /** ms after the cancel was sent. */
  readonly afterCancelMs: number;
  /** The message as received, cut to a few hundred characters. */
  readonly excerpt: string;
}

/**
 * An uncancelled call of the long tool, measured over a window as long as a
 * cancelled call's: whether the tool uses enough CPU for CPU to show that
 * its work stopped after a cancel.
 */
export interface UncancelledCall {
  /** Share of one core the server's process tree used over the window. */
  readonly coreShare: number;
  /** How busy its busiest thread was over the window (the kernel's counts), where the kernel keeps them. */
  readonly busy?: Busy;
  /** ms the window lasted (shorter when the call ended before its end). */
  readonly windowMs: number;
  /** The call was answered before the window began: nothing measured. */
  readonly finishedEarly: boolean;
  /** Whether CPU can tell work that goes on from work that stopped: the call kept at least a quarter of a core busy. */
  readonly cpuCanTell: boolean;
}

/** A statistic over the cancelled calls, with how many were taken and why some are not in it. */
export interface Measure extends Summary {
  /** Values taken (cancelled calls, or pings); `n` is fewer when some gave no value. */
  readonly taken?: number;
  /** Why `n` is less than `taken`, for the report. */
  readonly why?: string;
}

/** One complete-vs-cancel race. */
export interface RaceSample {
  readonly requestId: number;
  /** ms between sending the call and sending its cancel (undefined: the answer came first, no cancel sent). */
  readonly cancelDelayMs?: number;
  /** ms from cancel to answer (negative: the answer came before the cancel). */
  readonly answerAfterCancelMs?: number;
  /** Where the answer fell in the order of the wire (see ordering.ts). */
  readonly order?: Order;
  readonly answers: number;
  /** The call and its cancel went out in one write (stdio): the server read the cancel before it could start the call. */
  readonly together?: boolean;
  /**
   * `completed`: answered before the cancel was sent; `cancelled`: never
   * answered; `crossed`: answered before the markers behind the cancel were,
   * so possibly sent before the server read it; `late`: answered after the
   * whole marker chain: sent after the server had read the cancel, but
   * possibly decided before (a result handed from another thread), so not
   * held against it; `violation`: a call cancelled in the same write answered
   * after the markers, two answers, or an error that says it was cancelled.
   */
  readonly outcome: 'completed' | 'cancelled' | 'crossed' | 'late' | 'violation';
}

/** Where a message for a cancelled request arrived, relative to the cancel and the marker chain behind it. */
export type Order = 'before-cancel' | 'before-markers' | 'after-markers' | 'markers-unanswered';

/** Everything found for one server. */
export interface TargetResult {
  readonly label: string;
  readonly target: TargetSpec;
  /** The server's own name and version from `initialize`. */
  readonly serverInfo?: { name: string; version: string };
  readonly protocolVersion?: string;
  /** The era this result is for. */
  readonly era?: Era;
  readonly verdicts: Verdict[];
  readonly samples: CancelSample[];
  readonly races: RaceSample[];
  /** Ping round trips with nothing else running. */
  readonly idlePingMs: number[];
  readonly summaries: Record<string, Measure>;
  /** The uncancelled call of the long tool (CPU measurable only). */
  readonly uncancelled?: UncancelledCall;
  /** What the probe found out besides the verdicts (e.g. an era the server does not offer). */
  readonly notes?: string[];
  /** Anything that stopped the probe of this server early. */
  readonly error?: string;
}
