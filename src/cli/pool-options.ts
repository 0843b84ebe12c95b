/** The local-pool flags `serve` and `worker` share, turned into executor options in one place. */
import { resolve } from 'node:path';
import type { ExecutorOptions } from '../executor/options.js';
import type { ToolPriority } from '../pool/protocol.js';

export interface PoolFlags {
  threads?: number;
  spareThreads: number;
  graceMs: number;
  tools: string[];
  builtins: boolean;
  root: string;
  toolPriority: ToolPriority;
}

export function poolOptions(flags: PoolFlags): ExecutorOptions {
  return {
    ...(flags.threads !== undefined && { threads: flags.threads }),
    spareThreads: flags.spareThreads,
    graceMs: flags.graceMs,
    toolModules: flags.tools.map((m) => resolve(m)),
    builtins: flags.builtins,
    toolSettings: { root: resolve(flags.root) },
    toolPriority: flags.toolPriority,
  };
}
