/**
 * The worker's output check (workers/output-check.ts): zod's compiled
 * validator for schemas of this zod version, the runtime parser for a schema
 * from another zod; both accept and refuse alike, and name the mismatch in
 * zod's words.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkOutput } from '../../workers/output-check.js';
import { defineTool, stage } from '../../dist/src/stages/tool.js';

function toolWith(output: z.ZodObject) {
  return defineTool({
    name: 'shaped',
    description: 'test',
    input: z.object({}),
    output,
    stages: [stage('s', () => 'x')],
  });
}

const schema = () => z.strictObject({ count: z.number().int().min(1), label: z.string().optional() });

describe.each([
  ['this zod (compiled)', schema],
  [
    'another zod version (runtime parser)',
    () => {
      const s = schema();
      (s as unknown as { _zod: { version: object } })._zod.version = { major: 4, minor: 0, patch: 0 };
      return s;
    },
  ],
])('checkOutput with a schema of %s', (_, make) => {
  const output = make();
  const tool = toolWith(output);
  const check = (structuredContent: unknown) => () => checkOutput(tool, { content: [], structuredContent });

  it('accepts what matches, every time', () => {
    for (let i = 0; i < 3; i++) expect(check({ count: 2, label: 'a' })).not.toThrow();
    expect(check({ count: 1 })).not.toThrow();
  });

  it("refuses what does not match, naming the field in zod's words", () => {
    expect(check({ count: 0 })).toThrow(
      /^tool 'shaped' returned structuredContent that does not match its outputSchema: count: Too small/,
    );
    expect(check({ count: 1.5 })).toThrow(/count: /);
    expect(check({ count: 1, extra: true })).toThrow(/Unrecognized key/);
    expect(check({ count: 1, label: 7 })).toThrow(/label: /);
    expect(check(null)).toThrow(/outputSchema: expected object, received null$/);
  });

  it('names at most five mismatches, and counts the rest', () => {
    const many = toolWith(
      z.strictObject(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, z.number()]))),
    );
    const thrown = (() => {
      try {
        checkOutput(many, { content: [], structuredContent: {} });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(thrown).toMatch(
      /^tool 'shaped' returned structuredContent that does not match its outputSchema: f0: expected number, received undefined; .*f4: .* \(and 35 more\)$/,
    );
    expect(thrown!.split(';')).toHaveLength(5);
  });

  it('refuses a result without structuredContent', () => {
    expect(() => checkOutput(tool, { content: [] })).toThrow(
      "tool 'shaped' declares an outputSchema but returned no structuredContent",
    );
  });
});
