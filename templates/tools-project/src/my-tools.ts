// One tool, served with: mcp-cancel-pool serve --tools src/my-tools.ts
// Node (22.18 or newer) runs this file as written, stripping its types: no build step. So it is an ES module ("type":
// "module" in package.json) with only erasable TypeScript (no enum, namespace or parameter properties: tsconfig.json's
// "erasableSyntaxOnly" says so as you type), and mcp-cancel-pool must be installed in this project: the server imports
// this file, and this file imports it.
import { defineTool, stage, z } from 'mcp-cancel-pool/tools';

export default [
  defineTool({
    name: 'word_stats',
    description: 'Counts words in a text and returns the most frequent ones.',
    // `mcp-cancel-pool check-tools src/my-tools.ts` runs the tool with this, cancels it at 10, 50 and 90 % of
    // its run, and fails it if it went longer than cancelWithinMs (default 100 ms) without a ctx.checkpoint().
    examples: [{ text: 'the quick brown fox jumps over the lazy dog '.repeat(20_000), top: 3 }],
    input: z.object({
      text: z.string().describe('The text to analyse.'),
      top: z.number().int().min(1).max(100).default(10).describe('How many words to return.'),
    }),
    stages: [
      function tokenize({ text, top }: { text: string; top: number }) {
        return { words: text.toLowerCase().match(/\p{L}+/gu) ?? [], top };
      },
      stage('count', ({ words, top }: { words: string[]; top: number }, ctx) => {
        const counts = new Map<string, number>();
        for (let i = 0; i < words.length; i++) {
          if (i % 10_000 === 0) {
            ctx.checkpoint(); // stops here if the call was cancelled
            ctx.progress(i, words.length);
          }
          counts.set(words[i]!, (counts.get(words[i]!) ?? 0) + 1);
        }
        return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, top);
      }),
      (top: [string, number][]) => top.map(([word, n]) => `${word}: ${n}`).join('\n'),
    ],
  }),
];
