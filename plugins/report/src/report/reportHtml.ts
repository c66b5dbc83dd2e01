import { planCharts, type PlannedChart } from './chartPlan.js';
import { escapeHtml, jsonForScript } from './escapeHtml.js';
import type { JsonRecord } from './parseJsonLines.js';
import { decodeValue, type ReportData, type Series, type SeriesValue } from './reportData.js';
import { formatNumber, svgLineChart } from './svgLineChart.js';

/** The id of the `<script type="application/json">` element that holds the report's data. */
export const REPORT_DATA_ELEMENT_ID = 'drmas-report-data';

const CSS = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6675; --line: #e3e7ed; --card: #fff; --bg: #f5f7fa; --accent: #4e79a7; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 20px 24px 48px; }
header h1 { font-size: 22px; margin: 0 0 2px; }
header .sub { color: var(--muted); font-size: 12.5px; word-break: break-all; }
h2 { font-size: 16px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.notes { background: #fff8e1; border: 1px solid #f1d48a; border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
.notes ul { margin: 4px 0; padding-left: 18px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 8px; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-word; }
.big { font-size: 20px; font-weight: 600; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 12px; }
figure.plot { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px 6px; position: relative; }
figure.plot figcaption { font-weight: 600; margin-bottom: 4px; padding-right: 90px; }
figure.plot svg { display: block; width: 100%; height: auto; }
.log-toggle { position: absolute; opacity: 0; pointer-events: none; }
.log-label { position: absolute; top: 10px; right: 12px; font-size: 12px; color: var(--muted); cursor: pointer; user-select: none; border: 1px solid var(--line); border-radius: 4px; padding: 0 6px; }
.log-toggle:checked + .log-label { background: var(--accent); color: #fff; border-color: var(--accent); }
.log-toggle:focus-visible + .log-label { outline: 2px solid var(--accent); }
.views .log { display: none; }
.log-toggle:checked ~ .views .log { display: block; }
.log-toggle:checked ~ .views .linear { display: none; }
table.metrics { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); font-variant-numeric: tabular-nums; }
table.metrics th, table.metrics td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
table.metrics th:first-child, table.metrics td:first-child { text-align: left; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
table.metrics thead th { background: #eef1f5; position: sticky; top: 0; }
table.metrics tr.group td { background: #f7f9fb; font-weight: 600; text-align: left; font-family: inherit; }
.bad { color: #c0392b; font-weight: 600; }
.sample { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin-bottom: 10px; }
.sample summary { cursor: pointer; font-weight: 600; }
.sample .meta { color: var(--muted); font-weight: normal; margin-left: 8px; }
.turn-meta .meta { color: var(--muted); margin-left: 6px; }
.sample .turn { border-left: 3px solid var(--accent); padding-left: 10px; margin: 8px 0; }
.label { font-size: 11.5px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; margin-top: 6px; }
pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 3px 0; white-space: pre-wrap; word-break: break-word; font: 12.5px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; max-height: 360px; overflow: auto; }
.muted { color: var(--muted); }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
`;

function text(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '-';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function valueCell(value: SeriesValue | undefined): string {
  if (value === undefined) return '<td>-</td>';
  if (value === null || typeof value === 'string') return `<td class="bad">${value === null ? 'null' : value}</td>`;
  return `<td title="${value}">${escapeHtml(formatNumber(value))}</td>`;
}

function kv(rows: Array<[string, string]>): string {
  return `<dl class="kv">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function finiteValues(series: Series | undefined): number[] {
  return series ? series.values.map(decodeValue).filter(Number.isFinite) : [];
}

function summarySection(data: ReportData): string {
  const s = data.summary;
  const list = (items: string[]) => (items.length ? escapeHtml(items.join(', ')) : '<span class="muted">-</span>');
  const map = (m: Record<string, string>) => list(Object.entries(m).map(([k, v]) => `${k}: ${v}`));
  const steps = s.stepsPlanned !== null ? `${s.stepsRecorded} of ${s.stepsPlanned}` : String(s.stepsRecorded);
  const config = kv([
    ['presets', list(s.presets)],
    ['advantage', s.advantage ? escapeHtml(s.advantage) : '-'],
    ['models', map(s.models)],
    ['agents', map(s.agents)],
    ['steps', escapeHtml(`${steps}${s.lastStep !== null ? ` (last step ${s.lastStep})` : ''}`)],
    ['seed', s.seed === null ? '-' : String(s.seed)],
    ['wall time', s.totalSeconds === null ? '-' : escapeHtml(formatSeconds(s.totalSeconds))],
    ['steps / s', s.totalSeconds ? formatNumber(s.stepsRecorded / s.totalSeconds) : '-'],
  ]);
  const reward = finiteValues(data.series['outcome/mean']);
  const rewardRows: Array<[string, string]> = reward.length
    ? [
        ['outcome (last)', `<span class="big">${formatNumber(reward[reward.length - 1]!)}</span>`],
        ['outcome (first)', formatNumber(reward[0]!)],
        ['outcome (best)', formatNumber(reward.reduce((a, b) => Math.max(a, b)))],
      ]
    : [];
  const valRows: Array<[string, string]> = Object.keys(data.lastMetrics)
    .filter((k) => k.startsWith('val/'))
    .map((k) => [k, escapeHtml(text(data.lastMetrics[k]))]);
  const finals = kv([...rewardRows, ...valRows]);
  return (
    `<section><h2>Run summary</h2><div class="cards">` +
    `<div class="card"><h3>Config</h3>${config}</div>` +
    `<div class="card"><h3>Final metrics</h3>${rewardRows.length || valRows.length ? finals : '<p>no outcome or validation metrics</p>'}</div>` +
    `</div></section>`
  );
}

function plotFigure(planned: PlannedChart): string {
  const base = { ...planned.chart, width: 640, height: 250 };
  const linear = svgLineChart({ ...base, id: planned.id, yScale: 'linear' });
  const caption = `<figcaption>${escapeHtml(planned.title)}</figcaption>`;
  if (!planned.logToggle)
    return `<figure class="plot" data-plot="${escapeHtml(planned.id)}">${caption}<div class="views">${linear}</div></figure>`;
  const log = svgLineChart({ ...base, id: `${planned.id}-log`, yScale: 'log' });
  const inputId = `log-${planned.id}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    `<figure class="plot" data-plot="${escapeHtml(planned.id)}">${caption}` +
    `<input type="checkbox" class="log-toggle" id="${inputId}"${planned.logByDefault ? ' checked' : ''}>` +
    `<label class="log-label" for="${inputId}">log scale</label>` +
    `<div class="views"><div class="linear">${linear}</div><div class="log">${log}</div></div></figure>`
  );
}

function plotsSection(charts: PlannedChart[]): string {
  if (charts.length === 0) return '<section><h2>Plots</h2><p>No metrics to plot.</p></section>';
  const sections = [...new Set(charts.map((c) => c.section))];
  return sections
    .map(
      (name) =>
        `<section><h2>${escapeHtml(name)}</h2><div class="plots">` +
        `${charts
          .filter((c) => c.section === name)
          .map(plotFigure)
          .join('')}</div></section>`,
    )
    .join('');
}

function metricsTable(data: ReportData): string {
  const entries = Object.entries(data.series);
  if (entries.length === 0) return '';
  const rows: string[] = [];
  let previousGroup = '';
  for (const [key, s] of entries) {
    const group = key.includes('/') ? key.slice(0, key.indexOf('/')) : '(other)';
    if (group !== previousGroup) rows.push(`<tr class="group"><td colspan="6">${escapeHtml(group)}</td></tr>`);
    previousGroup = group;
    const finite = finiteValues(s);
    const stat = (f: (v: number[]) => number) => (finite.length ? valueCell(f(finite)) : '<td>-</td>');
    rows.push(
      `<tr><td>${escapeHtml(key)}</td>${valueCell(data.lastMetrics[key])}<td>${s.steps[s.steps.length - 1]}</td>` +
        `${stat((v) => v.reduce((a, b) => Math.min(a, b)))}${stat((v) => v.reduce((a, b) => Math.max(a, b)))}${stat((v) => v.reduce((a, b) => a + b, 0) / v.length)}</tr>`,
    );
  }
  return (
    `<section><h2>Last metrics</h2><table class="metrics"><thead><tr><th>metric</th><th>last</th><th>at step</th><th>min</th><th>max</th><th>mean</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table></section>`
  );
}

const SAMPLE_META = [
  'step',
  'dataSource',
  'taskId',
  'groupId',
  'trajectoryId',
  'agentId',
  'workerGroupId',
  'reward',
  'outcome',
  'valid',
  'done',
  'finishReason',
  'invalidReason',
];
const SAMPLE_TEXT = ['prompt', 'promptText', 'question', 'observation', 'response', 'responseText', 'text', 'answer', 'completion'];

function sampleBody(row: JsonRecord): string {
  const parts: string[] = [];
  for (const field of SAMPLE_TEXT) {
    if (typeof row[field] === 'string')
      parts.push(`<div class="label">${escapeHtml(field.replace(/Text$/, ''))}</div><pre>${escapeHtml(row[field])}</pre>`);
  }
  if (Array.isArray(row.messages)) {
    for (const message of row.messages as JsonRecord[]) {
      parts.push(
        `<div class="label">${escapeHtml(text(message?.role ?? 'message'))}</div><pre>${escapeHtml(text(message?.content ?? message))}</pre>`,
      );
    }
  }
  if (Array.isArray(row.turns)) {
    for (const turn of row.turns as JsonRecord[]) {
      const meta = SAMPLE_META.filter((k) => turn?.[k] !== undefined && k !== 'step' && k !== 'agentId')
        .map((k) => `${k} ${text(turn[k])}`)
        .join(' · ');
      const who = typeof turn?.agentId === 'string' ? ` · ${turn.agentId}` : '';
      parts.push(
        `<div class="turn"><div class="turn-meta"><strong>turn ${escapeHtml(text(turn?.index ?? ''))}${escapeHtml(who)}</strong> <span class="meta">${escapeHtml(meta)}</span></div>${sampleBody(turn ?? {})}</div>`,
      );
    }
  }
  return parts.join('');
}

function samplesSection(samples: JsonRecord[]): string {
  if (samples.length === 0) return '';
  const items = samples.map((row, i) => {
    const meta = SAMPLE_META.filter((k) => row[k] !== undefined)
      .map((k) => `${k} ${text(row[k])}`)
      .join(' · ');
    const rest = Object.fromEntries(
      Object.entries(row).filter(([k]) => !SAMPLE_META.includes(k) && !SAMPLE_TEXT.includes(k) && k !== 'turns' && k !== 'messages'),
    );
    const body = sampleBody(row);
    const restBlock = Object.keys(rest).length
      ? `<details><summary class="label">other fields</summary><pre>${escapeHtml(JSON.stringify(rest, null, 2))}</pre></details>`
      : '';
    return (
      `<details class="sample"${i < 2 ? ' open' : ''}><summary>Sample ${i + 1}<span class="meta">${escapeHtml(meta)}</span></summary>` +
      `${body || `<pre>${escapeHtml(JSON.stringify(row, null, 2))}</pre>`}${body ? restBlock : ''}</details>`
    );
  });
  return `<section><h2>Rollout samples</h2>${items.join('')}</section>`;
}

/** The whole page: no external resources; the data is embedded as JSON for tools. Pure. */
export function reportHtml(data: ReportData): string {
  const charts = planCharts(data.series);
  const title = `drmas report: ${data.runDir.split(/[\\/]/).filter(Boolean).pop() ?? data.runDir}`;
  const notes = data.notes.length
    ? `<div class="notes"><strong>Notes</strong><ul>${data.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul></div>`
    : '';
  const config = data.config
    ? `<section><h2>Config</h2><details><summary>config.json</summary><pre>${escapeHtml(JSON.stringify(data.config, null, 2))}</pre></details></section>`
    : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<header><h1>${escapeHtml(title)}</h1><div class="sub">${escapeHtml(data.runDir)} · generated ${escapeHtml(data.generatedAt)}</div></header>
${notes}
${summarySection(data)}
${plotsSection(charts)}
${metricsTable(data)}
${samplesSection(data.samples)}
${config}
<footer>Made by @drmas/plugin-report. Hover over a plot for the values at a step. The data of this page is in the element #${REPORT_DATA_ELEMENT_ID}.</footer>
</main>
<script type="application/json" id="${REPORT_DATA_ELEMENT_ID}">${jsonForScript(data)}</script>
</body>
</html>
`;
}
