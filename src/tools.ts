/**
 * The light entry point for tool modules: `import { defineTool, stage, z } from 'mcp-cancel-pool/tools'`.
 * Workers import tool modules, so this keeps the server, HTTP and SDK code out of every worker.
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
