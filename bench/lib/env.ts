/** What the results depend on: recorded with every run. */
import { execSync } from 'node:child_process';
import os from 'node:os';

export interface Environment {
  node: string;
  v8: string;
  platform: string;
  arch: string;
  cpus: number;
  cpuModel: string;
  availableParallelism: number;
  totalMemMb: number;
  loadAvgAtStart: number[];
  execArgv: string[];
  nodeOptions: string | undefined;
  argv: string[];
  gitCommit: string | undefined;
  gitDirty: boolean | undefined;
  startedAt: string;
}

export function environment(): Environment {
  const git = (cmd: string) => {
    try {
      return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  };
  const status = git('git status --porcelain --untracked-files=no'); // tracked changes only: an untracked file does not change what was measured
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.type()} ${os.release()}`,
    arch: process.arch,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    availableParallelism: os.availableParallelism(),
    totalMemMb: Math.round(os.totalmem() / 2 ** 20),
    loadAvgAtStart: os.loadavg(),
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS,
    argv: process.argv.slice(2),
    gitCommit: git('git rev-parse HEAD'),
    gitDirty: status === undefined ? undefined : status.length > 0,
    startedAt: new Date().toISOString(),
  };
}
