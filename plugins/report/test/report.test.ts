import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  compareEvaluations,
  episodesOf,
  jsonForScript,
  parseJsonLines,
  planPanels,
  renderReport,
  REPORT_DATA_ELEMENT_ID,
  scriptText,
  pageAssets,
  type ReportData,
} from '../src/index.js';
import { CONFIG, metricLines, NASTY_TEXT, syntheticRunDir } from './fixtures.js';

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
      'agent/solver/response_length_mean',
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

  test('panels: outcome and reward together, validation rates alone on their axis, agents and worker groups apart', () => {
    const plan = Object.fromEntries(data.panels.flatMap((p) => p.charts.map((c) => [c.id, c.series.map((x) => x.key)])));
    expect(plan.outcome).toEqual(['outcome/mean', 'reward/mean', 'outcome/std']);
    // val/tasks (64) is a count: not on the axis of avg@16 (about 0.3), nor anywhere else
    expect(plan.validation).toEqual(['val/avg@16', 'val/pass@16', 'val/gsm8k/avg@16', 'val/math/avg@16']);
    expect(Object.values(plan).flat()).not.toContain('val/tasks');
    // val/agent/... is per agent: no "data source" called agent
    expect(
      Object.values(plan)
        .flat()
        .filter((k) => k.startsWith('val/agent/')),
    ).toEqual([]);
    expect(plan.episodes).toEqual(['episode/count', 'episode/turns_mean']);
    expect(plan['agent-solver-rates']).toEqual(['agent/solver/valid_fraction']);
    expect(plan['agent-solver-lengths']).toEqual(['agent/solver/response_length_mean', 'agent/solver/turns']);
    expect(plan['agent-verifier-rates']).toEqual(['agent/verifier/reward_mean']);
    expect(plan['group-policy-loss']).toEqual(['actor/policy/pg_loss']);
    expect(plan['group-judge-grad_norm']).toEqual(['actor/judge/grad_norm']);
    expect(plan['group-policy-kl']).toEqual(['actor/policy/entropy']);
    // a count: the right axis of the clipped-and-skipped chart, not the group's "Other"
    expect(plan['group-policy-skipped']).toEqual(['actor/policy/micro_batches']);
    expect(plan['group-policy-other']).toBeUndefined();
    expect(plan.timing).toEqual(['timing/step', 'timing/rollout', 'timing/update']);
    expect(plan.throughput).toEqual(['perf/tokens_per_second']);
    expect(plan.memory).toEqual(['perf/cpu_memory_used_gb', 'perf/max_cpu_memory_used_gb', 'perf/heap_used_gb']);
    expect(plan['other-advantage']).toEqual(['advantage/std']);
    expect(plan['other-val']).toEqual(['val/extra@1']);
    // every chart has a figure in the page; policy's grad norms (10 .. 1.67) span less than two decades: log offered, off
    for (const id of Object.keys(plan)) expect(html).toContain(`<figure class="chart" data-chart="${id}">`);
    const grad = data.panels.flatMap((p) => p.charts).find((c) => c.id === 'group-policy-grad_norm')!;
    expect(grad.log).toBe('offer');
  });

  test('final metrics and the evaluation before and after, in tables that do not wrap numbers', () => {
    const final = html.match(/<div class="card" id="final-metrics">([\s\S]*?)<\/div>/)![1]!;
    // outcome/mean 0.1 .. 0.6, best at 6; reward/mean 0.05 .. 0.55, best 0.9 at step 4
    expect(final).toMatch(/<td>outcome\/mean<\/td><td title="0.1">0.1<\/td><td [^>]*>0.6<\/td><td [^>]*>0.6<\/td><td>6<\/td>/);
    expect(final).toMatch(/<td>reward\/mean<\/td><td [^>]*>0.05<\/td><td [^>]*>0.55<\/td><td [^>]*>0.9<\/td><td>4<\/td>/);
    expect(html).toMatch(/table\.nums th, table\.nums td \{[^}]*white-space: nowrap/);
    const evaluation = html.match(/<div class="card" id="evaluation">([\s\S]*?)<\/table><\/div>/)![1]!;
    expect(evaluation).toContain('first (step 2)');
    expect(evaluation).toContain('last (step 6)');
    // val/avg@16: 0.3 at step 2; at step 6 metrics.jsonl has 0.5 (eval.jsonl's 0.9 only fills gaps): +0.2
    expect(evaluation).toMatch(/<td>avg@16<\/td><td [^>]*>0.3<\/td><td [^>]*>0.5<\/td><td class="up">\+0.2<\/td>/);
    expect(evaluation).toMatch(
      /<tr class="group"><td colspan="4">data source gsm8k<\/td><\/tr><tr><td>avg@16<\/td><td [^>]*>0.2<\/td><td [^>]*>0.6<\/td>/,
    );
    expect(evaluation).toMatch(
      /<tr class="group"><td colspan="4">agent solver<\/td><\/tr><tr><td>turns<\/td><td [^>]*>1002<\/td><td [^>]*>1006<\/td>/,
    );
  });

  test('self-contained: uPlot inlined, no URL outside plain text, no external resources', () => {
    const markup = tagsOnly(html);
    expect(markup).not.toMatch(/https?:\/\//);
    expect(markup).not.toMatch(/<(link|img|iframe)\b|\ssrc=/);
    const { uplotScript, uplotCss, pageScript } = pageAssets();
    expect(html).toContain(scriptText(uplotScript));
    expect(html).toContain(uplotCss);
    expect(html).toContain(scriptText(pageScript.trim()));
    // the data element, uPlot, the page's own script
    expect(html.match(/<script\b/g)).toHaveLength(3);
  });

  test('rollout text is escaped: the data element gives every text back, no markup comes from a rollout', () => {
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<b>bold</b>');
    expect(html).not.toContain('<b>right</b>');
    expect(html.match(/<script\b/g)).toHaveLength(3);
    const episodes = data.rollouts.episodes;
    expect(episodes.map((e) => [e.step, e.id, e.turns.map((t) => t.agent)])).toEqual([
      [5, 's5-t0', ['solver']],
      [6, 's6-t0', ['solver', 'verifier']],
      [6, 's6-t1', ['solver', 'verifier']],
    ]);
    const turn = episodes[1]!.turns[0]!;
    expect(turn.prompt).toBe(NASTY_TEXT);
    expect(turn).toMatchObject({ action: '{"tag":"boxed","content":"4"}', reward: 1, advantage: 0.5, valid: true, responseTokens: 12 });
    expect(episodes[1]!.turns[1]).toMatchObject({ valid: false, invalidReason: 'no verdict', response: 'looks </script><b>right</b>' });
    expect(data.rollouts.bound).toMatch(
      /^3 episodes \(steps 5-6\) from rollouts\.jsonl \(all 0\.00 MiB read; texts cut at 4000 characters\)$/,
    );
  });

  test('the rollout browser keeps the newest episodes and says so', () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({ step: 1 + Math.floor(i / 2), trajectoryId: `t${i % 2}`, agent: 'a', reward: i }));
    const kept = episodesOf(rows, 3);
    expect(kept.map((e) => `${e.step}/${e.id}`)).toEqual(['3/t0', '3/t1', '4/t0']);
    expect(kept[2]!.turns.map((t) => t.reward)).toEqual([6]);
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

  test('planPanels leaves out series with no finite value', () => {
    const panels = planPanels({
      'outcome/mean': { steps: [1, 2], values: ['NaN', null] },
      'actor/x/grad_norm': { steps: [1], values: [1] },
    });
    expect(panels.map((p) => [p.id, p.charts.map((c) => c.id)])).toEqual([['group-x', ['group-x-grad_norm']]]);
  });

  test("planPanels draws trainer.agentDiagnostics' metrics in one panel, the agents side by side", () => {
    const one = { steps: [1], values: [1] };
    const panels = planPanels({
      'agent/a/grad_norm': one,
      'agent/b/grad_norm': one,
      'agent/a/inflation_measured': one,
      'agent/a/inflation_predicted': one,
      'agent/b/reward_std': one,
      'agent/b/inflation_advantages': one,
      'agent/a/constant_share': one,
      'agent/a/reward_mean': one,
    });
    const mechanism = panels.find((p) => p.id === 'mechanism')!;
    expect(mechanism.charts.map((c) => [c.id, c.series.map((x) => x.label)])).toEqual([
      ['mechanism-grad-norm', ['a grad_norm', 'b grad_norm']],
      ['mechanism-inflation', ['a inflation_measured', 'a inflation_predicted']],
      ['mechanism-inflation-advantages', ['b inflation_advantages']],
      ['mechanism-rewards', ['b reward_std']],
      ['mechanism-constant-share', ['a constant_share']],
    ]);
    expect(mechanism.charts.map((c) => c.leftBounds)).toEqual([undefined, undefined, undefined, undefined, [0, 1]]);
    expect(panels.find((p) => p.id === 'agent-a')!.charts.flatMap((c) => c.series.map((x) => x.key))).toEqual(['agent/a/reward_mean']);
  });

  test('compareEvaluations: first and last evaluation per scope, overall first', () => {
    const comparison = compareEvaluations({
      'val/pass@4': { steps: [0, 10], values: [0.5, 0.75] },
      'val/agent/b/turns': { steps: [0, 10], values: [8, 9] },
      'val/src/avg@4': { steps: [10], values: [0.25] },
      'outcome/mean': { steps: [1], values: [1] },
    })!;
    expect(comparison).toEqual({
      firstStep: 0,
      lastStep: 10,
      rows: [
        { scope: 'overall', metric: 'pass@4', key: 'val/pass@4', first: 0.5, last: 0.75 },
        { scope: 'data source src', metric: 'avg@4', key: 'val/src/avg@4', first: Number.NaN, last: 0.25 },
        { scope: 'agent b', metric: 'turns', key: 'val/agent/b/turns', first: 8, last: 9 },
      ],
    });
    expect(compareEvaluations({ 'outcome/mean': { steps: [1], values: [1] } })).toBeUndefined();
  });

  test('scriptText: no closing tag survives, the code means the same', () => {
    const code = 'var s = "</script><!--"; var t = "</STYLE>";';
    expect(scriptText(code)).not.toMatch(/<\/(script|style)/i);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const run = new Function(`${scriptText(code)}; return s + t;`) as () => string;
    expect(run()).toBe('</script><!--</STYLE>');
  });
});
