// TypeDoc plugin (typedoc.json "plugin"): in the landing page, which is README.md, an inline code span that is exactly
// the name of one documented export or entry point (`createToolPool`, `mcp-cancel-pool/client`) becomes a link to its
// page. The README stays plain Markdown for GitHub and npm, where `{@link}` would show as text.
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    const project = context.project;
    if (project.readme === undefined) return;
    /** @type {Map<string, import('typedoc').Reflection[]>} */
    const byName = new Map();
    for (const mod of project.children ?? []) {
      if (!mod.kindOf(ReflectionKind.Module)) continue;
      byName.set(mod.name, [mod]);
      for (const child of mod.children ?? []) {
        if (child.kindOf(ReflectionKind.Reference)) continue;
        byName.set(child.name, [...(byName.get(child.name) ?? []), child]);
      }
    }
    project.readme = project.readme.map((part) => {
      if (part.kind !== 'code' || !/^`[^`\s]+`$/.test(part.text)) return part;
      const target = pick(byName.get(part.text.slice(1, -1)) ?? []);
      if (target === undefined) return part;
      return { kind: 'inline-tag', tag: '@linkcode', text: part.text.slice(1, -1), target };
    });
  });
}

const TYPE_ONLY = ReflectionKind.TypeAlias | ReflectionKind.Interface;

/**
 * The one reflection a name means: itself if only one export has it; of a value and its type exported under one name
 * by one entry (`CancelAwareClient`), the value; a name that two entries export stays plain code.
 * @param {import('typedoc').Reflection[]} found
 */
function pick(found) {
  if (found.length === 1) return found[0];
  if (found.length === 0 || new Set(found.map((r) => r.parent)).size !== 1) return undefined;
  const values = found.filter((r) => !r.kindOf(TYPE_ONLY));
  return values.length === 1 ? values[0] : undefined;
}
