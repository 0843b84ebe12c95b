/**
 * The light entry point for tool modules: `import { defineTool, stage, z } from 'mcp-cancel-pool/tools'`.
 * Workers import tool modules, so this keeps the server, HTTP and SDK code out of every worker.
 *
 * `z` is zod's own (zod 4, a dependency of this package), re-exported so that a tool module needs no zod install of
 * its own; it is documented at [zod.dev/api](https://zod.dev/api), not here.
 *
 * @module mcp-cancel-pool/tools
 */
export { defineTool, stage, StopError } from './stages/tool.js';
export { SpawnError } from './stages/spawn.js';
export type { SpawnOptions, SpawnResult, SpawnFailure } from './stages/spawn.js';
export type {
  ToolDefinition,
  StageContext,
  StageFn,
  NamedStage,
  StageLike,
  ClientRequestMethod,
  ToolModule,
  LoggingLevel,
} from './stages/tool.js';
export { z } from 'zod';
