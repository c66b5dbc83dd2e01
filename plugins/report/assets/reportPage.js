/* The page script of report.html, run in the browser after uPlot's. It is inlined as its source text, called with
 * the id of the element that holds the report's data: `(function reportPage(id) {...})("drmas-report-data")`.
 *
 * It draws every chart that the report's plan lists (`data.panels`, made by src/report/chartPlan.ts) with uPlot:
 * drag across a chart to zoom into steps, double-click to zoom out, values on hover, cursors and zoom synced across
 * charts; and it fills the rollout browser from `data.rollouts.episodes` with its filters. Plain JavaScript so that
 * the package's TypeScript programs stay free of the DOM's types; it may use nothing outside its own body. Every text
 * from the run goes into the page through `textContent`, never as markup.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- called where the page inlines it
function reportPage(dataElementId) {
  const data = JSON.parse(document.getElementById(dataElementId).textContent);
  const uPlotCtor = window.uPlot;
  const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#7f7f7f'];
  const decode = (v) => {
    if (v === null) return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  };
  const fmt = (v) => {
    if (v === null || v === undefined || !Number.isFinite(v)) return '-';
    if (v === 0) return '0';
    const abs = Math.abs(v);
    if (abs >= 1e5 || abs < 1e-3) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  };
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  // ---- charts ----
  const charts = [];
  let syncing = false;
  function alignedData(chart) {
    const all = chart.series.map((s) => data.series[s.key] ?? { steps: [], values: [] });
    const xs = [...new Set(all.flatMap((s) => s.steps))].sort((a, b) => a - b);
    const ys = all.map((s) => {
      const byStep = new Map(s.steps.map((step, i) => [step, decode(s.values[i])]));
      return xs.map((x) => byStep.get(x) ?? null);
    });
    return { xs, ys };
  }
  // Steps are whole numbers: no tick at 1.5.
  const STEP_INCREMENTS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];
  // A flat series (a constant learning rate, a KL of 0) gets a band around its value, not uPlot's 0..100.
  const range = (_u, min, max) => {
    if (min === null || max === null) return [0, 1];
    if (min === max) {
      const pad = Math.abs(min) * 0.1 || 1;
      return [min - pad, max + pad];
    }
    return uPlotCtor.rangeNum(min, max, 0.1, true);
  };
  const bounded =
    ([lo, hi]) =>
    (u, min, max) => {
      const [from, to] = range(u, min, max);
      return [Math.max(lo, from), Math.min(hi, to)];
    };
  function draw(host, chart, log) {
    const previous = charts.findIndex((c) => c.host === host);
    if (previous >= 0) {
      charts[previous].plot.destroy();
      charts.splice(previous, 1);
    }
    const { xs, ys } = alignedData(chart);
    // Points where a chart has few steps, or where a series is measured at a few of them (the inflation every N
    // steps): a line alone would join those measurements as if they were continuous.
    const sparse = (i) => xs.length <= 12 || ys[i].filter((v) => v !== null).length * 2 < xs.length;
    const hasRight = chart.series.some((s) => s.axis === 'right');
    const leftValues = ys.filter((_, i) => chart.series[i].axis === 'left').flat();
    const useLog = log && leftValues.some((v) => v !== null && v > 0);
    const options = {
      width: Math.max(280, host.clientWidth),
      height: 230,
      cursor: { sync: { key: 'drmas-steps' }, drag: { x: true, y: false } },
      legend: { live: true },
      scales: {
        x: { time: false },
        left: useLog ? { distr: 3 } : { range: chart.leftBounds ? bounded(chart.leftBounds) : range },
        right: { range },
      },
      axes: [
        { label: 'step', labelSize: 18, size: 36, incrs: STEP_INCREMENTS },
        { scale: 'left', label: chart.leftLabel, labelSize: 18, size: 62, values: (_u, splits) => splits.map((v) => fmt(v)) },
        ...(hasRight
          ? [
              {
                scale: 'right',
                side: 1,
                label: chart.rightLabel ?? '',
                labelSize: 18,
                size: 62,
                grid: { show: false },
                values: (_u, splits) => splits.map((v) => fmt(v)),
              },
            ]
          : []),
      ],
      series: [
        { label: 'step', value: (_u, v) => (v === null ? '-' : String(v)) },
        ...chart.series.map((s, i) => ({
          label: s.label + (hasRight ? (s.axis === 'right' ? ' (right)' : '') : ''),
          scale: s.axis,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.6,
          dash: s.dashed ? [6, 4] : undefined,
          show: !s.hidden,
          spanGaps: true,
          points: { show: sparse(i), size: 6 },
          value: (_u, v) => fmt(v),
        })),
      ],
      hooks: {
        setScale: [
          (u, key) => {
            if (key === 'left') host.dataset.leftRange = `${u.scales.left.min} ${u.scales.left.max}`;
            if (key !== 'x') return;
            // The visible steps, for a reader of the page (and the browser test): `min max`.
            host.dataset.xRange = `${u.scales.x.min} ${u.scales.x.max}`;
            if (syncing) return;
            syncing = true;
            const { min, max } = u.scales.x;
            for (const other of charts)
              if (other.plot !== u && min !== undefined && max !== undefined) other.plot.setScale('x', { min, max });
            syncing = false;
          },
        ],
      },
    };
    const plot = new uPlotCtor(options, [xs, ...ys], host);
    const drawn = ys.reduce((n, y, i) => n + (chart.series[i].hidden ? 0 : y.filter((v) => v !== null).length), 0);
    host.dataset.points = String(drawn);
    host.dataset.scale = useLog ? 'log' : 'linear';
    charts.push({ plot, host, chart, xs });
  }
  const plans = new Map();
  for (const panel of data.panels) for (const chart of panel.charts) plans.set(chart.id, chart);
  for (const figure of document.querySelectorAll('figure[data-chart]')) {
    const chart = plans.get(figure.dataset.chart);
    const host = figure.querySelector('.plot-host');
    if (!chart || !host) continue;
    const toggle = figure.querySelector('input.log-toggle');
    draw(host, chart, toggle?.checked ?? false);
    toggle?.addEventListener('change', () => draw(host, chart, toggle.checked));
  }
  document.getElementById('reset-zoom')?.addEventListener('click', () => {
    for (const { plot, xs } of charts) if (xs.length) plot.setScale('x', { min: xs[0], max: xs[xs.length - 1] });
  });
  let resizeTimer;
  window.addEventListener('resize', () => {
    window.clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => {
      for (const { plot, host } of charts) plot.setSize({ width: Math.max(280, host.clientWidth), height: 230 });
    }, 100);
  });
  // ---- rollout browser ----
  const browser = document.getElementById('rollouts');
  if (!browser) return;
  const episodes = data.rollouts.episodes;
  const agentSelect = browser.querySelector('select[name=agent]');
  const rewardSelect = browser.querySelector('select[name=reward]');
  const stepSelect = browser.querySelector('select[name=step]');
  const list = browser.querySelector('.episodes');
  const count = browser.querySelector('.count');
  const more = browser.querySelector('button.more');
  const addOptions = (select, values) => {
    for (const v of values) select.append(new Option(v, v));
  };
  addOptions(agentSelect, [...new Set(episodes.flatMap((e) => e.turns.map((t) => t.agent)))].sort());
  addOptions(
    stepSelect,
    [...new Set(episodes.map((e) => e.step))]
      .filter((s) => s !== null)
      .sort((a, b) => a - b)
      .map(String),
  );
  const PAGE = 40;
  let shown = PAGE;
  const signOf = (v) => {
    const n = decode(v);
    if (n === null) return 'none';
    return n > 0 ? 'positive' : n < 0 ? 'negative' : 'zero';
  };
  const keep = (turn) =>
    (agentSelect.value === '' || turn.agent === agentSelect.value) &&
    (rewardSelect.value === '' || signOf(turn.reward) === rewardSelect.value);
  function field(label, text, className = 'text') {
    const box = el('div', 'field');
    box.append(el('div', 'label', label), el('pre', className, text));
    return box;
  }
  function turnView(turn) {
    const box = el('div', `turn${turn.valid === false ? ' invalid' : ''}`);
    box.dataset.agent = turn.agent;
    box.dataset.reward = signOf(turn.reward);
    const head = el('div', 'turn-head');
    head.append(el('strong', '', turn.agent));
    const facts = [
      ['turn', turn.index === null ? '-' : String(turn.index)],
      ['reward', fmt(decode(turn.reward))],
      ['advantage', fmt(decode(turn.advantage))],
      ['valid', turn.valid === null ? '-' : turn.valid ? 'yes' : `no${turn.invalidReason ? ` (${turn.invalidReason})` : ''}`],
      ['finish', turn.finishReason ?? '-'],
      ['tokens', turn.responseTokens === null ? '-' : String(turn.responseTokens)],
    ];
    for (const [k, v] of facts) {
      const fact = el('span', `fact fact-${k}`);
      fact.append(el('span', 'k', k), document.createTextNode(` ${v}`));
      head.append(fact);
    }
    box.append(head, field('prompt', turn.prompt, 'text prompt'), field('response', turn.response));
    if (turn.action) box.append(field('parsed action', turn.action, 'text action'));
    return box;
  }
  function episodeView(episode, turns) {
    const details = el('details', 'episode');
    details.dataset.step = String(episode.step);
    const summary = el('summary');
    const outcome = decode(episode.outcome);
    summary.append(
      el('span', 'ep-step', `step ${episode.step ?? '-'}`),
      el('span', 'ep-id', episode.id),
      el('span', 'ep-task', [episode.taskId, episode.dataSource].filter(Boolean).join(' · ')),
      el('span', `ep-outcome ${outcome === null ? '' : outcome > 0 ? 'good' : 'bad'}`, `outcome ${fmt(outcome)}`),
      el('span', 'ep-turns', `${turns.length} of ${episode.turns.length} turns`),
    );
    details.append(summary);
    // Turns are built when the episode is opened: a page of 500 episodes stays light.
    details.addEventListener('toggle', () => {
      if (details.open && details.childElementCount === 1) for (const t of turns) details.append(turnView(t));
    });
    return details;
  }
  function render() {
    const step = stepSelect.value;
    const matching = episodes
      .filter((e) => step === '' || String(e.step) === step)
      .map((e) => ({ episode: e, turns: e.turns.filter(keep) }))
      .filter((m) => m.turns.length > 0)
      .sort((a, b) => (b.episode.step ?? 0) - (a.episode.step ?? 0)); // newest step first; stable within a step
    list.replaceChildren(...matching.slice(0, shown).map((m) => episodeView(m.episode, m.turns)));
    const turns = matching.reduce((n, m) => n + m.turns.length, 0);
    count.textContent = `${matching.length} episodes, ${turns} turns match (${Math.min(shown, matching.length)} shown)`;
    count.dataset.episodes = String(matching.length);
    count.dataset.turns = String(turns);
    more.hidden = matching.length <= shown;
    const first = list.querySelector('details');
    if (first instanceof HTMLDetailsElement) first.open = true;
  }
  for (const select of [agentSelect, rewardSelect, stepSelect])
    select.addEventListener('change', () => {
      shown = PAGE;
      render();
    });
  more.addEventListener('click', () => {
    shown += PAGE;
    render();
  });
  render();
}
