/**
 * `tools/call` params checked at the door. The SDK validates them inside its
 * request handler wrapper, where a failure becomes -32603 with zod's JSON
 * dump as the message; checked first here, it is -32602 in words.
 */
import { CallToolRequestParamsSchema } from '@modelcontextprotocol/core';
import { describeIssues } from '../issues.js';

/** Why these params would fail the SDK's `tools/call` schema, or undefined if they pass. */
export function callParamsProblem(params: unknown): string | undefined {
  if (plainlyValid(params)) return undefined; // the common case costs no schema parse
  const parsed = CallToolRequestParamsSchema.safeParse(params);
  return parsed.success ? undefined : `invalid tools/call params: ${describeIssues(parsed.error)}`;
}

/**
 * The schema's checks on what a client controls, by hand: `name` a string,
 * `arguments` absent or an object, `task` absent or an object with a
 * numeric `ttl`. `_meta` was checked with the envelope by the transport.
 * A false here only sends the params to the real schema.
 */
function plainlyValid(params: unknown): boolean {
  if (!isObject(params)) return false;
  const { name, arguments: args, task } = params as { name?: unknown; arguments?: unknown; task?: unknown };
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return false;
  if (task === undefined) return true;
  return isObject(task) && ((task as { ttl?: unknown }).ttl === undefined || typeof (task as { ttl?: unknown }).ttl === 'number');
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
