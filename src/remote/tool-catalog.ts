/** A front end's tool metadata: the same modules as the worker hosts, loaded on the main thread only (no pool). */
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOOLS, loadTools } from '../executor/options.js';
import type { ToolDefinition } from '../stages/tool.js';

/** Loads tools by name from the built-ins (unless `builtins` is false) and `modules` (paths or file URLs). */
export function loadToolCatalog(modules: readonly (string | URL)[], builtins = true): Promise<Map<string, ToolDefinition>> {
  return loadTools([...(builtins ? [BUILTIN_TOOLS] : []), ...modules.map((m) => (m instanceof URL ? m.href : m.startsWith('file:') ? m : pathToFileURL(m).href))]);
}
