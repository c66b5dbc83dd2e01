import { escapeHtml } from './escapeHtml.js';

/** `[x, y]`; a non-finite y (or y <= 0 on a log scale) leaves a gap in the line. */
export type Point = [x: number, y: number];

export interface ChartLine {
  label: string;
  points: Point[];
  color?: string;
  dashed?: boolean;
}

export interface LineChartOptions {
  lines: ChartLine[];
  /** A shaded band `[x, low, high]`, drawn under the lines (e.g. mean ± std). */
  band?: { label: string; points: Array<[x: number, low: number, high: number]>; color?: string };
  /** Stack `lines` as areas (totals per x); `overlay` lines are drawn on top unstacked. */
  stacked?: boolean;
  overlay?: ChartLine[];
  yScale?: 'linear' | 'log';
  width?: number;
  height?: number;
  xLabel?: string;
  yLabel?: string;
  /** Text for screen readers and the SVG's `<title>`. */
  title?: string;
  /** Unique within the page: names the chart's clip path (ids of inline SVGs share the document's namespace). */
  id?: string;
}

/** Tableau 10: distinguishable and readable on white. */
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function paletteColor(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"';
const CHAR_WIDTH = 6.6;
const MAX_DRAWN_POINTS = 1200;
const MAX_HOVER_COLUMNS = 400;

function niceStep(range: number, targetTicks: number): number {
  const raw = range / Math.max(1, targetTicks);
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return nice * power;
}

export function linearTicks(min: number, max: number, targetTicks = 5): number[] {
  if (!(max > min)) return [min];
  const step = niceStep(max - min, targetTicks);
  const ticks: number[] = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

export function logTicks(min: number, max: number): number[] {
  const lo = Math.floor(Math.log10(min));
  const hi = Math.ceil(Math.log10(max));
  const decades = hi - lo;
  const stride = Math.max(1, Math.ceil(decades / 6));
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e += stride) {
    const v = 10 ** e;
    if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
    if (decades <= 2) for (const m of [2, 5]) if (m * v >= min && m * v <= max) ticks.push(m * v);
  }
  return ticks.sort((a, b) => a - b);
}

/** Short tick and tooltip text: 3 significant digits, exponent form for very large or small numbers. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1e5 || abs < 1e-3) return value.toExponential(1).replace('e+', 'e');
  return String(Number(value.toPrecision(3)));
}

function usable(y: number, log: boolean): boolean {
  return Number.isFinite(y) && (!log || y > 0);
}

/** Keeps the first, min, max and last point of each bucket, so a long series keeps its shape (and its spikes). */
function decimate(points: Point[], max: number): Point[] {
  if (points.length <= max) return points;
  const bucket = Math.ceil(points.length / (max / 4));
  const out: Point[] = [];
  for (let start = 0; start < points.length; start += bucket) {
    const slice = points.slice(start, start + bucket);
    const finite = slice.filter(([, y]) => Number.isFinite(y));
    if (finite.length < slice.length) {
      out.push(...slice.filter(([, y]) => !Number.isFinite(y)).slice(0, 1));
    }
    if (!finite.length) continue;
    const first = finite[0]!;
    let lo = first;
    let hi = first;
    for (const p of finite) {
      if (p[1] < lo[1]) lo = p;
      if (p[1] > hi[1]) hi = p;
    }
    const keep = [first, lo, hi, finite[finite.length - 1]!];
    out.push(...keep.filter((p, i) => keep.indexOf(p) === i).sort((a, b) => a[0] - b[0]));
  }
  return out.sort((a, b) => a[0] - b[0]);
}

interface Legend {
  svg: string;
  height: number;
}

function legend(items: Array<{ label: string; color: string; dashed?: boolean; area?: boolean }>, left: number, width: number): Legend {
  if (items.length === 0) return { svg: '', height: 0 };
  const rowHeight = 16;
  let x = left;
  let row = 0;
  const parts: string[] = [];
  for (const item of items) {
    const itemWidth = 22 + item.label.length * CHAR_WIDTH + 14;
    if (x + itemWidth > left + width && x > left) {
      x = left;
      row++;
    }
    const y = 12 + row * rowHeight;
    parts.push(
      item.area
        ? `<rect x="${x}" y="${y - 6}" width="16" height="9" fill="${item.color}" fill-opacity="0.55"/>`
        : `<line x1="${x}" y1="${y - 2}" x2="${x + 16}" y2="${y - 2}" stroke="${item.color}" stroke-width="2.5"${item.dashed ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    parts.push(`<text x="${x + 21}" y="${y + 2}" font-size="11" fill="#333">${escapeHtml(item.label)}</text>`);
    x += itemWidth;
  }
  return { svg: `<g class="legend">${parts.join('')}</g>`, height: (row + 1) * rowHeight + 4 };
}

function pathOf(points: Point[], sx: (x: number) => number, sy: (y: number) => number, log: boolean): string {
  let d = '';
  let pen = false;
  for (const [x, y] of points) {
    if (!usable(y, log)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`;
    pen = true;
  }
  return d;
}

/** Single points between gaps draw no path segment; they get a dot. */
function isolatedPoints(points: Point[], log: boolean): Point[] {
  return points.filter(
    ([, y], i) =>
      usable(y, log) && !(i > 0 && usable(points[i - 1]![1], log)) && !(i < points.length - 1 && usable(points[i + 1]![1], log)),
  );
}

/** An SVG line chart (or stacked areas) with axes, ticks, a legend and per-step hover text. Pure: returns markup. */
export function svgLineChart(options: LineChartOptions): string {
  const width = options.width ?? 640;
  const clipId = `clip-${(options.id ?? 'chart').replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const baseHeight = options.height ?? 260;
  const log = options.yScale === 'log';
  const lines = options.lines.map((line, i) => ({ ...line, color: line.color ?? paletteColor(i) }));
  const overlay = (options.overlay ?? []).map((line) => ({ ...line, color: line.color ?? '#222' }));

  let stackedLines: Array<(typeof lines)[number] & { lower: Point[] }> = [];
  if (options.stacked) {
    const xs = [...new Set(lines.flatMap((l) => l.points.map(([x]) => x)))].sort((a, b) => a - b);
    const totals = new Map(xs.map((x) => [x, 0]));
    stackedLines = lines.map((line) => {
      const byX = new Map(line.points.map(([x, y]) => [x, Number.isFinite(y) ? y : 0]));
      const lower: Point[] = xs.map((x) => [x, totals.get(x)!]);
      const upper: Point[] = xs.map((x) => {
        const top = totals.get(x)! + (byX.get(x) ?? 0);
        totals.set(x, top);
        return [x, top];
      });
      return { ...line, points: upper, lower };
    });
  }
  const drawn = options.stacked ? stackedLines : lines;

  const xs: number[] = [];
  const ys: number[] = [];
  for (const line of [...drawn, ...overlay]) {
    for (const [x, y] of line.points) {
      xs.push(x);
      if (usable(y, log)) ys.push(y);
    }
  }
  for (const [x, lo, hi] of options.band?.points ?? []) {
    xs.push(x);
    if (usable(lo, log)) ys.push(lo);
    if (usable(hi, log)) ys.push(hi);
  }
  const finiteXs = xs.filter(Number.isFinite);
  if (finiteXs.length === 0 || ys.length === 0) {
    return (
      `<svg viewBox="0 0 ${width} 60" width="${width}" height="60" role="img">` +
      `<text x="${width / 2}" y="34" text-anchor="middle" font-size="12" fill="#888" ${FONT}>no finite values to plot</text></svg>`
    );
  }

  const legendItems = [
    ...(options.band ? [{ label: options.band.label, color: options.band.color ?? lines[0]?.color ?? paletteColor(0), area: true }] : []),
    ...drawn.map((l) => ({ label: l.label, color: l.color, dashed: l.dashed, area: options.stacked })),
    ...overlay.map((l) => ({ label: l.label, color: l.color, dashed: l.dashed })),
  ];
  const margin = { top: 8, right: 16, bottom: options.xLabel ? 40 : 28, left: 58 };
  const key = legend(legendItems, margin.left, width - margin.left - margin.right);
  margin.top += key.height;
  const height = baseHeight + key.height;
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;

  // reduce, not Math.min(...xs): long runs have more values than a call takes arguments
  let xMin = finiteXs.reduce((a, b) => Math.min(a, b));
  let xMax = finiteXs.reduce((a, b) => Math.max(a, b));
  if (xMin === xMax) {
    xMin -= 1;
    xMax += 1;
  }
  let yMin = ys.reduce((a, b) => Math.min(a, b));
  let yMax = ys.reduce((a, b) => Math.max(a, b));
  if (log) {
    yMin /= 1.15;
    yMax *= 1.15;
    if (yMax / yMin < 10) {
      const widen = Math.sqrt(10 / (yMax / yMin));
      yMin /= widen;
      yMax *= widen;
    }
  } else {
    if (options.stacked || (yMin >= 0 && yMin <= yMax * 0.4)) yMin = 0;
    if (yMin === yMax) {
      const pad = Math.abs(yMin) * 0.1 || 1;
      yMin -= pad;
      yMax += pad;
    } else {
      const pad = (yMax - yMin) * 0.05;
      if (yMin !== 0) yMin -= pad;
      yMax += pad;
    }
  }
  const sx = (x: number) => margin.left + ((x - xMin) / (xMax - xMin)) * plotW;
  const sy = log
    ? (y: number) => margin.top + plotH - ((Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * plotH
    : (y: number) => margin.top + plotH - ((y - yMin) / (yMax - yMin)) * plotH;

  const parts: string[] = [];
  const yTicks = log ? logTicks(yMin, yMax) : linearTicks(yMin, yMax);
  for (const t of yTicks) {
    const y = sy(t).toFixed(1);
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y}" y2="${y}" stroke="#e6e6e6"/>`);
    parts.push(
      `<text x="${margin.left - 6}" y="${y}" dy="0.32em" text-anchor="end" font-size="10.5" fill="#555">${formatNumber(t)}</text>`,
    );
  }
  const xCandidates = linearTicks(xMin, xMax, Math.max(2, Math.floor(plotW / 80)));
  const integerTicks = xCandidates.filter((t) => Number.isInteger(t));
  const xTicks = integerTicks.length >= 2 ? integerTicks : xCandidates;
  for (const t of xTicks) {
    const x = sx(t).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${margin.top + plotH}" y2="${margin.top + plotH + 4}" stroke="#999"/>`);
    parts.push(`<text x="${x}" y="${margin.top + plotH + 15}" text-anchor="middle" font-size="10.5" fill="#555">${formatNumber(t)}</text>`);
  }
  parts.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`);
  if (options.xLabel) {
    parts.push(
      `<text x="${margin.left + plotW / 2}" y="${height - 6}" text-anchor="middle" font-size="11" fill="#555">${escapeHtml(options.xLabel)}</text>`,
    );
  }
  if (options.yLabel) {
    parts.push(
      `<text transform="translate(12 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="11" fill="#555">${escapeHtml(options.yLabel)}</text>`,
    );
  }

  parts.push(`<g clip-path="url(#${clipId})">`);
  if (options.band) {
    const color = options.band.color ?? lines[0]?.color ?? paletteColor(0);
    const pts = options.band.points.filter(([x, lo, hi]) => Number.isFinite(x) && usable(lo, log) && usable(hi, log));
    if (pts.length > 1) {
      const top = pts.map(([x, , hi]) => `${sx(x).toFixed(1)},${sy(hi).toFixed(1)}`);
      const bottom = pts.map(([x, lo]) => `${sx(x).toFixed(1)},${sy(lo).toFixed(1)}`).reverse();
      parts.push(`<polygon points="${[...top, ...bottom].join(' ')}" fill="${color}" fill-opacity="0.18" stroke="none"/>`);
    }
  }
  if (options.stacked) {
    for (const line of stackedLines) {
      const upper = decimate(line.points, MAX_DRAWN_POINTS);
      const lower = decimate(line.lower, MAX_DRAWN_POINTS);
      const poly = [
        ...upper.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`),
        ...lower.reverse().map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`),
      ];
      parts.push(
        `<polygon points="${poly.join(' ')}" fill="${line.color}" fill-opacity="0.55" stroke="${line.color}" stroke-width="0.8"/>`,
      );
    }
  }
  for (const line of [...(options.stacked ? [] : lines), ...overlay]) {
    const points = decimate(line.points, MAX_DRAWN_POINTS);
    const d = pathOf(points, sx, sy, log);
    if (d.includes('L')) {
      parts.push(
        `<path d="${d}" fill="none" stroke="${line.color}" stroke-width="1.8" stroke-linejoin="round"${line.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
      );
    }
    const dots = points.length <= 40 ? points.filter(([, y]) => usable(y, log)) : isolatedPoints(points, log);
    for (const [x, y] of dots) parts.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2.4" fill="${line.color}"/>`);
  }
  parts.push('</g>');

  // Hover text per step: one transparent column each, with a <title> listing every series at that x.
  const hoverXs = [...new Set([...lines, ...overlay].flatMap((l) => l.points.map(([x]) => x)))]
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (hoverXs.length <= MAX_HOVER_COLUMNS) {
    const lookups = [...lines, ...overlay].map((l) => ({ label: l.label, byX: new Map(l.points) }));
    const columns: string[] = [];
    hoverXs.forEach((x, i) => {
      const left = i === 0 ? margin.left : (sx(hoverXs[i - 1]!) + sx(x)) / 2;
      const right = i === hoverXs.length - 1 ? margin.left + plotW : (sx(x) + sx(hoverXs[i + 1]!)) / 2;
      const text = [
        `step ${formatNumber(x)}`,
        ...lookups.filter((l) => l.byX.has(x)).map((l) => `${l.label}: ${formatNumber(l.byX.get(x)!)}`),
      ];
      columns.push(
        `<rect x="${left.toFixed(1)}" y="${margin.top}" width="${Math.max(0.5, right - left).toFixed(1)}" height="${plotH}" fill="transparent"><title>${escapeHtml(text.join('\n'))}</title></rect>`,
      );
    });
    parts.push(`<g class="hover">${columns.join('')}</g>`);
  }

  const title = options.title ? `<title>${escapeHtml(options.title)}</title>` : '';
  return (
    `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" ${FONT}>${title}` +
    `<defs><clipPath id="${clipId}"><rect x="${margin.left}" y="${margin.top - 2}" width="${plotW}" height="${plotH + 4}"/></clipPath></defs>` +
    `${key.svg}${parts.join('')}</svg>`
  );
}
