/**
 * `render_mandelbrot`: a PNG of the Mandelbrot set with smooth colouring.
 * Iterates row by row with a cancellation check per row (and within long rows).
 */
import { PNG } from 'pngjs';
import { z } from 'zod';
import { defineTool, stage } from '../../src/stages/tool.js';

const input = z.object({
  width: z.number().int().min(16).max(2048).default(512).describe('Image width in pixels, 16–2048 (default 512).'),
  height: z.number().int().min(16).max(2048).default(512).describe('Image height in pixels, 16–2048 (default 512).'),
  centerX: z.number().min(-4).max(4).default(-0.5).describe('Real part of the image centre (default -0.5).'),
  centerY: z.number().min(-4).max(4).default(0).describe('Imaginary part of the image centre (default 0).'),
  zoom: z
    .number()
    .positive()
    .max(1e13)
    .default(1)
    .describe('Magnification; 1 shows the whole set, each doubling halves the view (default 1).'),
  maxIterations: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(500)
    .describe('Iterations before a point counts as inside the set; raise it for deep zooms (default 500).'),
});
type Input = z.infer<typeof input>;

/** Smooth escape counts; -1 marks points inside the set. */
interface Field {
  args: Input;
  values: Float32Array;
  inside: number;
}

const LOG2 = Math.log(2);

/** Smooth (fractional) escape count, or -1 if `c` never escapes. */
function escape(cx: number, cy: number, max: number): number {
  // Main cardioid and period-2 bulb: skip the most expensive points outright.
  const q = (cx - 0.25) * (cx - 0.25) + cy * cy;
  if (q * (q + (cx - 0.25)) <= 0.25 * cy * cy || (cx + 1) * (cx + 1) + cy * cy <= 0.0625) return -1;
  let x = 0;
  let y = 0;
  let x2 = 0;
  let y2 = 0;
  for (let n = 0; n < max; n++) {
    y = 2 * x * y + cy;
    x = x2 - y2 + cx;
    x2 = x * x;
    y2 = y * y;
    // Bail out at radius 16 rather than 2 so the smoothing term is accurate.
    if (x2 + y2 > 256) return n + 1 - Math.log(Math.log(x2 + y2) / 2 / LOG2) / LOG2;
  }
  return -1;
}

export const renderMandelbrot = defineTool({
  name: 'render_mandelbrot',
  title: 'Render the Mandelbrot set',
  description:
    'Renders a view of the Mandelbrot set as a PNG image with smooth colouring. Cost grows with width × height × maxIterations; deep zooms need more iterations and take seconds.',
  input,
  output: z.strictObject({
    width: z.number().int().describe('Image width in pixels.'),
    height: z.number().int().describe('Image height in pixels.'),
    centerX: z.number().describe('Real part of the image centre.'),
    centerY: z.number().describe('Imaginary part of the image centre.'),
    zoom: z.number().describe('Magnification.'),
    maxIterations: z.number().int().describe('Iterations before a point counts as inside the set.'),
    insidePixels: z.number().int().min(0).describe('Pixels inside the set.'),
    pngBytes: z.number().int().min(1).describe('Size of the PNG in the image content.'),
  }),
  stages: [
    stage('iterate', (args: Input, ctx): Field => {
      const { width, height, maxIterations } = args;
      // The shorter side spans 3 units at zoom 1, so the whole set fits.
      const scale = 3 / args.zoom / Math.min(width, height);
      const values = new Float32Array(width * height);
      let inside = 0;
      for (let row = 0; row < height; row++) {
        ctx.checkpoint();
        const cy = args.centerY + (height / 2 - row - 0.5) * scale;
        for (let col = 0; col < width; col++) {
          // One row can cost 2048 × 100k iterations: check within it too.
          if ((col & 63) === 0) ctx.checkpoint();
          const v = escape(args.centerX + (col + 0.5 - width / 2) * scale, cy, maxIterations);
          if (v < 0) inside++;
          values[row * width + col] = v;
        }
        ctx.progress(row + 1, height, `row ${row + 1}/${height}`);
      }
      return { args, values, inside };
    }),
    stage('colourise', (field: Field, ctx) => {
      const { width, height } = field.args;
      const png = new PNG({ width, height, colorType: 6 });
      for (let row = 0; row < height; row++) {
        ctx.checkpoint();
        for (let col = 0; col < width; col++) {
          const i = row * width + col;
          const v = field.values[i]!;
          const o = i * 4;
          if (v < 0) {
            png.data[o] = png.data[o + 1] = png.data[o + 2] = 0;
          } else {
            // A cosine palette on log-scaled counts keeps bands visible at any depth.
            const t = Math.log1p(v) * 0.35;
            png.data[o] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.0)));
            png.data[o + 1] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.1)));
            png.data[o + 2] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.2)));
          }
          png.data[o + 3] = 255;
        }
      }
      return { field, png };
    }),
    stage('encode', ({ field, png }: { field: Field; png: PNG }) => ({ field, bytes: PNG.sync.write(png) })),
    stage('report', ({ field, bytes }: { field: Field; bytes: Buffer }) => {
      const a = field.args;
      const share = ((100 * field.inside) / field.values.length).toFixed(1);
      return {
        content: [
          { type: 'image' as const, data: bytes.toString('base64'), mimeType: 'image/png' },
          {
            type: 'text' as const,
            text: `Mandelbrot set, ${a.width}×${a.height} px centred on (${a.centerX}, ${a.centerY}) at zoom ${a.zoom}, ${a.maxIterations} max iterations; ${share}% of pixels inside the set; PNG ${bytes.length} bytes.`,
          },
        ],
        structuredContent: { ...a, insidePixels: field.inside, pngBytes: bytes.length },
      };
    }),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' }, // long CPU work: a client may run it as a task
});
