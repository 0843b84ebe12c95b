/**
 * The schemas a pooled tool hands the SDK's `registerTool`: Standard Schema
 * objects (what the SDK 2.x accepts) whose JSON Schema was computed once, when
 * the pool was made. The SDK converts a tool's schema on every `tools/list`
 * and on the first call of each registered tool; with a zod schema that is a
 * full conversion per server instance, and the SDK's stateless HTTP handler
 * builds an instance per request. Handed these, it reads the stored object.
 *
 * Validation is the pool's, as under `serve`: the arguments are checked
 * against the tool's zod schema when the call starts (an invalid call gets the
 * same tool error as from `serve`), and results against `output` in the
 * worker. So `validate` passes the value through unchanged.
 */
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';

/** A Standard Schema carrying a JSON Schema computed once; see the module comment. */
export function listedSchema(
  json: Record<string, unknown>,
): StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>> {
  const stored = () => json;
  return {
    '~standard': {
      version: 1,
      vendor: 'mcp-cancel-pool',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: stored, output: stored },
    },
  };
}
