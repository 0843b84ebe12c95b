/** A front end's tool metadata: the same modules as the worker hosts, loaded on the main thread only (no pool). */
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOOLS } from '../executor.js';
import { toolsOfModule, type ToolDefinition } from '../stages/tool.js';

/** Loads tools by name from the built-ins (unless `builtins` is false) and `modules` (paths or file URLs). */
export async function loadToolCatalog(modules: readonly (string | URL)[], builtins = true): Promise<Map<string, ToolDefinition>> {
  const urls = [...(builtins ? [BUILTIN_TOOLS] : []), ...modules.map((m) => (m instanceof URL ? m.href : m.startsWith('file:') ? m : pathToFileURL(m).href))];
  const tools = new Map<string, ToolDefinition>();
  for (const url of urls) {
    for (const tool of toolsOfModule((await import(url)) as Record<string, unknown>, url)) {
      if (tools.has(tool.name)) throw new Error(`tool '${tool.name}' is defined twice (again in ${url})`);
      tools.set(tool.name, tool);
    }
  }
  return tools;
}
