import { formatMetric } from '../progress/summaryTable.js';
import type { PanelSection, PlannedChart, PlannedPanel } from './chartPlan.js';
import { escapeHtml, jsonForScript, scriptText } from './escapeHtml.js';
import { compareEvaluations } from './evaluationComparison.js';
import { decodeValue, type ReportData, type Series, type SeriesValue } from './reportData.js';
import { pageAssets, reportPageScript } from './pageAssets.js';

/** The id of the `<script type="application/json">` element that holds the report's data. */
export const REPORT_DATA_ELEMENT_ID = 'drmas-report-data';

const CSS = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6675; --line: #e3e7ed; --card: #fff; --bg: #f5f7fa; --accent: #4e79a7; --good: #2e7d32; --bad: #c0392b; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1440px; margin: 0 auto; padding: 20px 24px 48px; }
header h1 { font-size: 22px; margin: 0 0 2px; }
header .sub { color: var(--muted); font-size: 12.5px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 30px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 16px 0 8px; }
.notes { background: #fff8e1; border: 1px solid #f1d48a; border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
.notes ul { margin: 4px 0; padding-left: 18px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 12px; align-items: start; }
.stack { display: grid; gap: 12px; min-width: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-width: 0; overflow-x: auto; }
.card h3 { font-size: 12.5px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 8px; }
dl.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 3px 14px; margin: 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
table.nums { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.nums th, table.nums td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
table.nums th:first-child, table.nums td:first-child { text-align: left; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
table.nums thead th { background: #eef1f5; font-weight: 600; }
table.nums tr.group td { background: #f7f9fb; font-weight: 600; font-family: inherit; font-size: 13px; }
table.nums td.up { color: var(--good); } table.nums td.down { color: var(--bad); }
.bad { color: var(--bad); font-weight: 600; }
.toolbar { position: sticky; top: 0; z-index: 5; display: flex; gap: 12px; align-items: center; background: var(--bg); padding: 8px 0; border-bottom: 1px solid var(--line); font-size: 12.5px; color: var(--muted); }
.toolbar nav { flex: none; } .toolbar button { flex: none; white-space: nowrap; }
.toolbar nav a { margin-right: 10px; white-space: nowrap; color: var(--accent); text-decoration: none; }
button { font: inherit; font-size: 12.5px; border: 1px solid var(--line); background: #fff; border-radius: 4px; padding: 2px 10px; cursor: pointer; }
button:hover { border-color: var(--accent); }
.panel { margin-bottom: 8px; min-width: 0; }
.charts > .panel { margin: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 12px; }
figure.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px 4px; min-width: 0; }
figure.chart figcaption { font-weight: 600; margin-bottom: 2px; display: flex; justify-content: space-between; gap: 8px; }
figure.chart figcaption label { font-weight: normal; font-size: 12px; color: var(--muted); white-space: nowrap; cursor: pointer; }
.plot-host { width: 100%; }
.uplot { font-family: inherit; }
.u-legend { font-size: 12px; text-align: left; }
.u-legend .u-series > * { padding: 1px 3px; }
.u-legend .u-value { font-variant-numeric: tabular-nums; }
#rollouts .filters { display: flex; flex-wrap: wrap; gap: 14px; align-items: center; margin-bottom: 8px; }
#rollouts .filters label { color: var(--muted); font-size: 12.5px; }
#rollouts select { font: inherit; font-size: 12.5px; margin-left: 4px; }
#rollouts .bound, #rollouts .count { color: var(--muted); font-size: 12.5px; }
details.episode { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 6px 12px; margin-bottom: 6px; }
details.episode summary { cursor: pointer; display: flex; flex-wrap: wrap; gap: 14px; align-items: baseline; }
details.episode summary span { font-size: 12.5px; }
.ep-step { font-weight: 600; } .ep-id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; } .ep-task, .ep-turns { color: var(--muted); }
.ep-outcome.good { color: var(--good); font-weight: 600; } .ep-outcome.bad { color: var(--bad); }
.turn { border-left: 3px solid var(--accent); padding: 2px 0 2px 10px; margin: 10px 0; }
.turn.invalid { border-left-color: var(--bad); }
.turn-head { display: flex; flex-wrap: wrap; gap: 12px; align-items: baseline; font-size: 12.5px; }
.turn-head .k { color: var(--muted); }
.field .label { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; margin-top: 4px; }
pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 2px 0; white-space: pre-wrap; overflow-wrap: anywhere; font: 12.5px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; max-height: 320px; overflow: auto; }
.muted { color: var(--muted); }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
`;

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '-';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function valueCell(value: SeriesValue | number | undefined, className = ''): string {
  const cls = className ? ` class="${className}"` : '';
  if (value === undefined) return `<td${cls}>-</td>`;
  if (value === null || typeof value === 'string') return `<td class="bad">${value === null ? 'null' : value}</td>`;
  if (Number.isNaN(value)) return `<td${cls}>-</td>`;
  return `<td${cls} title="${value}">${escapeHtml(formatMetric(value))}</td>`;
}

function kv(rows: Array<[string, string]>): string {
  return `<dl class="kv">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function finiteValues(series: Series | undefined): Array<[number, number]> {
  if (!series) return [];
  return series.steps.map((step, i): [number, number] => [step, decodeValue(series.values[i]!)]).filter(([, v]) => Number.isFinite(v));
}

function configCard(data: ReportData): string {
  const s = data.summary;
  const list = (items: string[]) => (items.length ? escapeHtml(items.join(', ')) : '<span class="muted">-</span>');
  const map = (m: Record<string, string>) => list(Object.entries(m).map(([k, v]) => `${k}: ${v}`));
  const steps = s.stepsPlanned !== null ? `${s.stepsRecorded} of ${s.stepsPlanned}` : String(s.stepsRecorded);
  return `<div class="card"><h3>Run</h3>${kv([
    ['presets', list(s.presets)],
    ['plugins', list(s.plugins)],
    ['advantage', s.advantage ? escapeHtml(s.advantage) : '-'],
    ['models', map(s.models)],
    ['agents', map(s.agents)],
    ['steps', escapeHtml(`${steps}${s.lastStep !== null ? ` (last step ${s.lastStep})` : ''}`)],
    ['seed', s.seed === null ? '-' : String(s.seed)],
    ['wall time', s.totalSeconds === null ? '-' : escapeHtml(formatSeconds(s.totalSeconds))],
    ['steps / s', s.totalSeconds ? escapeHtml(formatMetric(s.stepsRecorded / s.totalSeconds)) : '-'],
  ])}</div>`;
}

/** The headline metrics: first, last and best of the outcome and reward; the last of each overall validation rate. */
function finalMetricsCard(data: ReportData): string {
  const rows: string[] = [];
  for (const key of ['outcome/mean', 'reward/mean']) {
    const points = finiteValues(data.series[key]);
    if (!points.length) continue;
    const best = points.reduce((a, b) => (b[1] > a[1] ? b : a));
    rows.push(
      `<tr><td>${escapeHtml(key)}</td>${valueCell(points[0]![1])}${valueCell(points[points.length - 1]![1])}` +
        `${valueCell(best[1])}<td>${best[0]}</td></tr>`,
    );
  }
  const head = '<thead><tr><th>metric</th><th>first</th><th>last</th><th>best</th><th>at step</th></tr></thead>';
  const body = rows.length
    ? `<table class="nums">${head}<tbody>${rows.join('')}</tbody></table>`
    : '<p class="muted">no outcome or reward metrics</p>';
  return `<div class="card" id="final-metrics"><h3>Final metrics</h3>${body}</div>`;
}

function changeCell(change: number): string {
  if (!Number.isFinite(change)) return '<td>-</td>';
  const sign = change > 0 ? '+' : '';
  return `<td class="${change > 0 ? 'up' : change < 0 ? 'down' : ''}">${sign}${escapeHtml(formatMetric(change))}</td>`;
}

function evaluationCard(data: ReportData): string {
  const comparison = compareEvaluations(data.series);
  if (!comparison) return `<div class="card" id="evaluation"><h3>Evaluation</h3><p class="muted">no evaluation in this run</p></div>`;
  const { firstStep, lastStep, rows } = comparison;
  const same = firstStep === lastStep;
  const out: string[] = [];
  let scope = '';
  for (const row of rows) {
    if (row.scope !== scope) out.push(`<tr class="group"><td colspan="${same ? 2 : 4}">${escapeHtml(row.scope)}</td></tr>`);
    scope = row.scope;
    const change = row.last - row.first;
    out.push(
      `<tr><td>${escapeHtml(row.metric)}</td>` +
        (same ? valueCell(row.last) : `${valueCell(row.first)}${valueCell(row.last)}${changeCell(change)}`) +
        `</tr>`,
    );
  }
  const head = same
    ? `<th>metric</th><th>step ${firstStep}</th>`
    : `<th>metric</th><th>first (step ${firstStep})</th><th>last (step ${lastStep})</th><th>change</th>`;
  return (
    `<div class="card" id="evaluation"><h3>Evaluation${same ? '' : ': first and last'}</h3>` +
    `<table class="nums"><thead><tr>${head}</tr></thead><tbody>${out.join('')}</tbody></table></div>`
  );
}

function chartFigure(chart: PlannedChart): string {
  const id = escapeHtml(chart.id);
  const toggle =
    chart.log === 'none'
      ? ''
      : `<label><input type="checkbox" class="log-toggle"${chart.log === 'default' ? ' checked' : ''}> log scale</label>`;
  return `<figure class="chart" data-chart="${id}"><figcaption><span>${escapeHtml(chart.title)}</span>${toggle}</figcaption><div class="plot-host"></div></figure>`;
}

const SECTIONS: PanelSection[] = ['Overview', 'Agents', 'Worker groups', 'Timing and throughput', 'Other metrics'];
const sectionId = (section: PanelSection) => `section-${section.toLowerCase().replace(/ /g, '-')}`;

function chartSections(panels: PlannedPanel[]): string {
  if (panels.length === 0) return '<section><h2>Charts</h2><p>No metrics to plot.</p></section>';
  return SECTIONS.filter((section) => panels.some((p) => p.section === section))
    .map((section) => {
      const own = panels.filter((p) => p.section === section);
      // Panels of one chart each share one grid (side by side); larger panels get their own heading and grid.
      const body = own.every((p) => p.charts.length === 1)
        ? `<div class="charts">${own.map((p) => `<div class="panel" data-panel="${escapeHtml(p.id)}">${chartFigure(p.charts[0]!)}</div>`).join('')}</div>`
        : own
            .map(
              (p) =>
                `<div class="panel" data-panel="${escapeHtml(p.id)}">${own.length > 1 || p.title !== section ? `<h3>${escapeHtml(p.title)}</h3>` : ''}` +
                `<div class="charts">${p.charts.map(chartFigure).join('')}</div></div>`,
            )
            .join('');
      return `<section id="${sectionId(section)}"><h2>${escapeHtml(section)}</h2>${body}</section>`;
    })
    .join('');
}

function rolloutSection(data: ReportData): string {
  const select = (name: string, label: string, options: Array<[string, string]>) =>
    `<label>${label}<select name="${name}">${options.map(([v, t]) => `<option value="${v}">${t}</option>`).join('')}</select></label>`;
  return (
    `<section id="rollouts"><h2>Rollouts</h2>` +
    `<p class="bound">${escapeHtml(data.rollouts.bound)}</p>` +
    `<div class="filters">${select('agent', 'agent', [['', 'all']])}` +
    `${select('reward', 'turn reward', [
      ['', 'all'],
      ['positive', 'positive'],
      ['zero', 'zero'],
      ['negative', 'negative'],
    ])}` +
    `${select('step', 'step', [['', 'all']])}<span class="count"></span></div>` +
    `<div class="episodes"></div><button type="button" class="more" hidden>show more</button></section>`
  );
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
    const finite = finiteValues(s).map(([, v]) => v);
    const stat = (f: (v: number[]) => number) => (finite.length ? valueCell(f(finite)) : '<td>-</td>');
    rows.push(
      `<tr><td>${escapeHtml(key)}</td>${valueCell(data.lastMetrics[key])}<td>${s.steps[s.steps.length - 1]}</td>` +
        `${stat((v) => v.reduce((a, b) => Math.min(a, b)))}${stat((v) => v.reduce((a, b) => Math.max(a, b)))}${stat((v) => v.reduce((a, b) => a + b, 0) / v.length)}</tr>`,
    );
  }
  return (
    `<section id="all-metrics"><h2>All metrics</h2><table class="nums"><thead><tr><th>metric</th><th>last</th><th>at step</th><th>min</th><th>max</th><th>mean</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table></section>`
  );
}

/** The whole page: one file, no external resources (uPlot's script and css inlined); the data embedded as JSON. Pure. */
export function reportHtml(data: ReportData): string {
  const assets = pageAssets();
  const title = `drmas report: ${data.runDir.split(/[\\/]/).filter(Boolean).pop() ?? data.runDir}`;
  const notes = data.notes.length
    ? `<div class="notes"><strong>Notes</strong><ul>${data.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul></div>`
    : '';
  const config = data.config
    ? `<section><h2>Config</h2><details><summary>config.json</summary><pre>${escapeHtml(JSON.stringify(data.config, null, 2))}</pre></details></section>`
    : '';
  const nav = SECTIONS.filter((s) => data.panels.some((p) => p.section === s))
    .map((s) => `<a href="#${sectionId(s)}">${escapeHtml(s)}</a>`)
    .concat('<a href="#rollouts">Rollouts</a>', '<a href="#all-metrics">All metrics</a>')
    .join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${scriptText(assets.uplotCss)}</style>
<style>${CSS}</style>
</head>
<body>
<main>
<header><h1>${escapeHtml(title)}</h1><div class="sub">${escapeHtml(data.runDir)} · generated ${escapeHtml(data.generatedAt)}</div></header>
${notes}
<section id="summary"><h2>Run summary</h2><div class="cards"><div class="stack">${configCard(data)}${finalMetricsCard(data)}</div>${evaluationCard(data)}</div></section>
<div class="toolbar"><nav>${nav}</nav><button type="button" id="reset-zoom">reset zoom</button><span>drag across a chart to zoom into steps (all charts follow), double-click to zoom out; click a legend entry to show or hide its line</span></div>
${chartSections(data.panels)}
${rolloutSection(data)}
${metricsTable(data)}
${config}
<footer>Made by @drmas/plugin-report with uPlot. The data of this page is in the element #${REPORT_DATA_ELEMENT_ID}.</footer>
</main>
<script type="application/json" id="${REPORT_DATA_ELEMENT_ID}">${jsonForScript(data)}</script>
<script>${scriptText(assets.uplotScript)}</script>
<script>${scriptText(reportPageScript(REPORT_DATA_ELEMENT_ID))}</script>
</body>
</html>
`;
}
