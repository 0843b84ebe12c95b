/**
 * An example tool module, as a user would write it (outside this repo,
 * import from 'mcp-cancel-pool/tools' instead of the relative path).
 * Run it: mcp-cancel-pool serve --tools dist/workers/examples/word-stats.js
 */
import { defineTool, stage, z } from '../../src/tools.js';

export default defineTool({
  name: 'word_stats',
  description: 'Counts words in a text and returns the most frequent ones.',
  input: z.object({
    text: z.string().describe('The text to analyse.'),
    top: z.number().int().min(1).max(100).default(10).describe('How many of the most frequent words to return.'),
  }),
  // The shape of structuredContent: tools/list shows it as the outputSchema, and the worker checks each result against it.
  output: z.strictObject({
    total: z.number().int().describe('Words in the text.'),
    distinct: z.number().int().describe('Different words.'),
    top: z.record(z.string(), z.number().int()).describe('The most frequent words and their counts.'),
  }),
  stages: [
    // Plain named functions work too; the name shows up in error messages.
    function tokenize(input: { text: string; top: number }) {
      return { words: input.text.toLowerCase().match(/\p{L}+/gu) ?? [], top: input.top };
    },
    stage('count', (s: { words: string[]; top: number }, ctx) => {
      const counts = new Map<string, number>();
      for (let i = 0; i < s.words.length; i++) {
        if (i % 10_000 === 0) {
          ctx.checkpoint(); // a cancelled call stops here, within 10k words
          ctx.progress(i, s.words.length);
        }
        const w = s.words[i]!;
        counts.set(w, (counts.get(w) ?? 0) + 1);
      }
      return { total: s.words.length, counts, top: s.top };
    }),
    stage('rank', (s: { total: number; counts: Map<string, number>; top: number }) => {
      const top = [...s.counts].sort((a, b) => b[1] - a[1]).slice(0, s.top);
      return {
        content: [
          {
            type: 'text' as const,
            text: `${s.total} words, ${s.counts.size} distinct; top: ${top.map(([w, n]) => `${w} (${n})`).join(', ')}`,
          },
        ],
        structuredContent: { total: s.total, distinct: s.counts.size, top: Object.fromEntries(top) },
      };
    }),
  ],
});
