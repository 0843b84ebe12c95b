/**
 * Chart specs (Vega-Lite) and their headless rendering to SVG with Vega's
 * own SVG renderer: no browser, no canvas.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { cdf } from './stats.js';

const WIDTH = 560;
const HEIGHT = 300;

/** What every chart here shares: the schema, its title and its size. */
function frame(title: string) {
  return { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title, width: WIDTH, height: HEIGHT } as const;
}

/** Latency CDFs, one line per series, log-scaled time axis. */
export function cdfChart(
  title: string,
  series: readonly { label: string; values: readonly number[] }[],
  xTitle = 'latency (ms, log scale)',
): TopLevelSpec {
  const values = series.flatMap((s) => {
    const points = cdf(s.values);
    const name = `${s.label} (n=${s.values.length})`;
    // Start each curve at 0 so that a series with a single sample still draws its step.
    return [...(points.length ? [{ ...points[0]!, fraction: 0 }] : []), ...points].map((p) => ({
      series: name,
      ms: Math.max(p.ms, 0.01),
      fraction: p.fraction,
    }));
  });
  return {
    ...frame(title),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 2 },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: xTitle, scale: { type: 'log' }, axis: { grid: true } },
      y: { field: 'fraction', type: 'quantitative', title: 'fraction of samples ≤ x', scale: { domain: [0, 1] } },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        legend: { orient: 'bottom', columns: 2, labelLimit: 360 },
      },
    },
  };
}

/** Grouped bars: one group per `group`, one bar per `series`. */
export function barChart(
  title: string,
  rows: readonly { group: string; series: string; value: number }[],
  yTitle: string,
  groupTitle: string,
): TopLevelSpec {
  return {
    ...frame(title),
    data: { values: rows.map((r) => ({ ...r })) },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'group', type: 'nominal', title: groupTitle, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'series', type: 'nominal', sort: null },
      y: { field: 'value', type: 'quantitative', title: yTitle },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        sort: null,
        legend: { orient: 'bottom', columns: 3, labelLimit: 360 },
      },
    },
  };
}

/** Points on a log scale: one column per `group`, one colour per `series` (for values spanning decades). */
export function logDotChart(
  title: string,
  rows: readonly { group: string; series: string; value: number }[],
  yTitle: string,
  groupTitle: string,
): TopLevelSpec {
  return {
    ...frame(title),
    data: { values: rows.map((r) => ({ ...r })) },
    mark: { type: 'point', filled: true, size: 90, opacity: 0.9 },
    encoding: {
      x: { field: 'group', type: 'nominal', title: groupTitle, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'series', type: 'nominal', sort: null },
      y: { field: 'value', type: 'quantitative', title: yTitle, scale: { type: 'log' }, axis: { grid: true } },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        sort: null,
        legend: { orient: 'bottom', columns: 2, labelLimit: 360 },
      },
      shape: { field: 'series', type: 'nominal', title: null, sort: null },
    },
  };
}

/** Renders a Vega-Lite spec to an SVG string. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
