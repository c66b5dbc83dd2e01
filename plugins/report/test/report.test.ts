import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  jsonForScript,
  parseJsonLines,
  planCharts,
  renderReport,
  REPORT_DATA_ELEMENT_ID,
  svgLineChart,
  type ReportData,
} from '../src/index.js';
import { CONFIG, metricLines, syntheticRunDir } from './fixtures.js';

function embeddedData(html: string): ReportData {
  const match = html.match(new RegExp(`<script type="application/json" id="${REPORT_DATA_ELEMENT_ID}">([\\s\\S]*?)</script>`));
  if (!match) throw new Error('no embedded data');
  return JSON.parse(match[1]!) as ReportData;
}

/** Markup with the text between tags removed: what is left are tags and attributes. */
function tagsOnly(html: string): string {
  return html.replace(/<script type="application\/json"[\s\S]*?<\/script>/, '').replace(/>[^<]*</g, '><');
}

describe('renderReport', () => {
  let runDir: string;
  let html: string;
  let data: ReportData;
  let notes: string[];

  beforeAll(() => {
    runDir = syntheticRunDir();
    const rendered = renderReport({ runDir, now: new Date('2025-01-02T03:04:05Z') });
    expect(rendered.file).toBe(path.join(runDir, 'report.html'));
    html = readFileSync(rendered.file, 'utf8');
    data = embeddedData(html);
    notes = rendered.notes;
  });

  afterAll(() => rmSync(runDir, { recursive: true, force: true }));

  test('the embedded series equal the metrics lines, non-finite values kept as strings', () => {
    const lines = metricLines();
    for (const key of [
      'outcome/mean',
      'outcome/std',
      'reward/mean',
      'actor/policy/grad_norm',
      'actor/judge/grad_norm',
      'timing/update',
      'response_length/mean',
    ]) {
      expect(data.series[key]!.steps).toEqual(lines.map((l) => l.step));
      expect(data.series[key]!.values).toEqual(lines.map((l) => l[key]));
    }
    const even = lines.filter((l) => l.step % 2 === 0);
    for (const key of ['val/avg@16', 'val/pass@16', 'val/gsm8k/avg@16', 'val/math/avg@16']) {
      expect(data.series[key]).toEqual({ steps: [2, 4, 6], values: even.map((l) => l[key]) });
    }
    expect(data.series['actor/judge/pg_loss']!.values[2]).toBe('NaN');
    expect(data.series['actor/judge/pg_loss']!.values[3]).toBe(lines[3]!['actor/judge/pg_loss']);
  });

  test('eval.jsonl adds where metrics.jsonl has no value', () => {
    expect(data.series['val/extra@1']).toEqual({ steps: [6], values: [0.33] });
    expect(data.lastMetrics['val/avg@16']).toBe(0.5);
  });

  test('a half-written last line is skipped with a note', () => {
    expect(data.series['outcome/mean']!.steps).not.toContain(7);
    expect(notes.some((n) => n.includes('metrics.jsonl') && n.includes('partly written last line'))).toBe(true);
    expect(html).toContain('partly written last line');
  });

  test('the summary has the config essentials', () => {
    expect(data.summary).toMatchObject({
      presets: ['math'],
      advantage: 'drmas',
      seed: 7,
      stepsPlanned: 6,
      stepsRecorded: 6,
      lastStep: 6,
      models: { policy: 'tiny (tfjs)', judge: 'small (tfjs)' },
      agents: { solver: 'policy', verifier: 'judge' },
    });
    expect(data.summary.totalSeconds).toBeCloseTo(
      metricLines().reduce((a, l) => a + l['timing/step']!, 0),
      9,
    );
    expect(data.config).toEqual(CONFIG);
  });

  test('one <svg> per expected plot', () => {
    const expected = [
      'outcome',
      'reward',
      'val',
      'val-by-source-avg@16',
      'grad_norm',
      'loss-pg_loss',
      'entropy',
      'response_length',
      'validity',
      'timing',
      'throughput',
    ];
    for (const id of expected) {
      const figure = html.match(new RegExp(`<figure class="plot" data-plot="${id}">([\\s\\S]*?)</figure>`));
      expect(figure).not.toBeNull();
      expect(figure![1]).toContain('<svg');
    }
    const grad = html.match(/<figure class="plot" data-plot="grad_norm">([\s\S]*?)<\/figure>/)![1];
    expect(grad).toContain('log scale');
    for (const group of ['policy', 'judge']) expect(grad).toContain(`>${group}</text>`);
    // grad norms span 0.01 .. 10: log scale is the default view
    expect(grad).toMatch(/class="log-toggle"[^>]*checked/);
  });

  test('self-contained: no URL outside plain text, no external resources', () => {
    const markup = tagsOnly(html);
    expect(markup).not.toMatch(/https?:\/\//);
    expect(markup).not.toMatch(/<(link|img|iframe)\b/);
    expect(markup).not.toMatch(/<script(?![^>]*type="application\/json")/);
    expect(html).toContain('See https://example.com/q');
  });

  test('rollout text is escaped', () => {
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('looks &lt;/script&gt;&lt;b&gt;right&lt;/b&gt;');
    // only the data element is a script; the `</script>` in the samples did not end it early
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(data.samples.map((s) => s.agentId)).toEqual(['solver', 'verifier']);
    expect(data.samples[0]!.responseText).toBe('<script>alert("x")</script> The answer is \\boxed{4} & done');
    expect(data.samples[0]!.promptIds).toBe('[40 numbers]');
  });

  test('a run directory with nothing in it still renders', () => {
    const empty = syntheticRunDir();
    rmSync(path.join(empty, 'metrics.jsonl'));
    rmSync(path.join(empty, 'config.json'));
    rmSync(path.join(empty, 'eval.jsonl'));
    const { file, notes: emptyNotes } = renderReport({ runDir: empty });
    expect(readFileSync(file, 'utf8')).toContain('No metrics to plot');
    expect(emptyNotes.join('\n')).toMatch(/metrics\.jsonl: not found/);
    rmSync(empty, { recursive: true, force: true });
  });

  const chromium = '/usr/bin/chromium';
  (existsSync(chromium) && !process.env.CI ? test : test.skip)('renders in headless Chromium to a non-trivial PNG', () => {
    const png = path.join(runDir, 'report.png');
    execFileSync(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--hide-scrollbars',
        `--screenshot=${png}`,
        '--window-size=1280,2400',
        `file://${path.join(runDir, 'report.html')}`,
      ],
      { stdio: 'ignore', timeout: 30_000 },
    );
    expect(statSync(png).size).toBeGreaterThan(20_000);
  });
});

describe('pieces', () => {
  test('jsonForScript cannot close its element and parses back', () => {
    const value = { text: '</script><script>alert(1)</script><!-- \u2028 &' };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/<|>/);
    expect(JSON.parse(json)).toEqual(value);
  });

  test('parseJsonLines: bare NaN/Infinity, a bad middle line, a partial last line', () => {
    const { records, notes } = parseJsonLines('{"a": NaN, "b": -Infinity, "s": "NaN Infinity"}\nnot json\n{"a": 1}\n{"a": 2', 'm.jsonl');
    expect(records).toHaveLength(2);
    expect(records[0]!.a).toBeNaN();
    expect(records[0]!.b).toBe(Number.NEGATIVE_INFINITY);
    expect(records[0]!.s).toBe('NaN Infinity');
    expect(notes).toEqual([
      'm.jsonl: skipped line 2, which is not valid JSON',
      expect.stringContaining('m.jsonl: skipped a partly written last line'),
    ]);
  });

  test('svgLineChart draws gaps at non-finite values and skips empty data', () => {
    const svg = svgLineChart({
      lines: [
        {
          label: 'a',
          points: [
            [1, 1],
            [2, 2],
            [3, Number.NaN],
            [4, 3],
            [5, 4],
          ],
        },
      ],
    });
    expect(svg.match(/<path d="M[^"]*M/)).not.toBeNull();
    expect(svgLineChart({ lines: [{ label: 'a', points: [[1, Number.NaN]] }] })).toContain('no finite values');
  });

  test('planCharts leaves out series with no finite value', () => {
    const charts = planCharts({
      'reward/mean': { steps: [1, 2], values: ['NaN', null] },
      'actor/x/grad_norm': { steps: [1], values: [1] },
    });
    expect(charts.map((c) => c.id)).toEqual(['grad_norm']);
  });
});
