/** What a scenario is given and what it hands back to the report. */
import type { TopLevelSpec } from 'vega-lite';
import type { Progress } from './progress.js';
import { serverCommand, specLabel, type ServerSpec } from './servers.js';

export interface RunContext {
  readonly quick: boolean;
  readonly progress: Progress;
  /** A line for the log (stderr, above the bar). */
  readonly log: (line: string) => void;
  /** `--rows`: run only these configurations (by key) of the scenarios that have them; all when absent. */
  readonly rows?: readonly string[];
  /** `--unpinned`: scenarios that pin the client and the servers to cores (overhead) leave that to the OS. */
  readonly unpinned?: boolean;
}

export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
  readonly note?: string;
}

export interface Chart {
  /** File name without extension. */
  readonly file: string;
  readonly title: string;
  readonly spec: TopLevelSpec;
}

export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface ServerInfo {
  readonly label: string;
  readonly command: string;
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  /** Markdown: what was measured and what the numbers mean. */
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly servers: readonly ServerInfo[];
  readonly tables: readonly Table[];
  /** A few rows for the summary printed at the end of the run. */
  readonly headline?: Table;
  readonly charts: readonly Chart[];
  readonly targets: readonly Target[];
  /** Every sample, for the JSON. */
  readonly samples: unknown;
  durationMs?: number;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  /** Estimated run time in ms: the progress bar's total; the scenario ticks the estimate of each step as it ends. */
  estimateMs(quick: boolean): number;
  run(ctx: RunContext): Promise<ScenarioResult>;
}

export function serverInfo(spec: ServerSpec): ServerInfo {
  return {
    label: specLabel(spec),
    command: ['node', ...serverCommand(spec).map((a) => a.replace(/^.*\/(dist(?:-dev)?\/)/, '$1'))].join(' '),
  };
}
