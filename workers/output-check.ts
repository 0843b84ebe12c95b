/**
 * The check of a result's `structuredContent` against its tool's output
 * schema, in the worker. zod's runtime parser builds a parsed copy and a
 * parse context on every call; zod's own compiled validator (`z.compile`,
 * per schema, not zod's process-wide `zod/compile` setting, which would
 * reach the user's schemas too) only answers valid or not. Measured on the
 * zero-work `spin`, the runtime parse cost the worker about 3 µs per call
 * (BENCHMARKS.md, tenth pass on issue 24).
 *
 * A schema is compiled only when it comes from this very zod version: the
 * generated code reads zod's internals, and a tool module may bring a zod of
 * its own. A rejection is always confirmed by the runtime parser, which also
 * names the mismatch, so error texts stay zod's.
 */
import { compile, core, type ZodObject } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolDefinition } from '../src/stages/tool.js';
import { describeIssues } from '../src/issues.js';

type Validate = (value: unknown) => boolean;

/** One validator per output schema, made on the schema's first result in this thread. */
const validators = new WeakMap<ZodObject, Validate>();

function sameZod(schema: ZodObject): boolean {
  const theirs = (schema as { _zod?: { version?: { major?: number; minor?: number; patch?: number } } })._zod?.version;
  const ours = core.version;
  return theirs?.major === ours.major && theirs.minor === ours.minor && theirs.patch === ours.patch;
}

function validatorOf(schema: ZodObject): Validate {
  let validate = validators.get(schema);
  if (!validate) {
    const compiled = sameZod(schema) ? compile(schema) : undefined;
    validate =
      compiled && typeof compiled.validate === 'function'
        ? (value) => compiled.validate(value)
        : (value) => schema.safeParse(value).success;
    validators.set(schema, validate);
  }
  return validate;
}

/** Throws, naming what differs, if the result's `structuredContent` does not match the tool's output schema (if it declares one). */
export function checkOutput(tool: ToolDefinition, result: CallToolResult): void {
  const output = tool.output;
  if (!output) return;
  if (result.structuredContent === undefined)
    throw new Error(`tool '${tool.name}' declares an outputSchema but returned no structuredContent`);
  if (validatorOf(output)(result.structuredContent)) return;
  const parsed = output.safeParse(result.structuredContent);
  if (parsed.success) return; // the compiled validator may refuse what the runtime accepts (it then says so by falling back)
  // In the project's words, and at most a few issues: a tool's output can break its schema in thousands of places.
  throw new Error(
    `tool '${tool.name}' returned structuredContent that does not match its outputSchema: ${describeIssues(parsed.error)}`,
  );
}
