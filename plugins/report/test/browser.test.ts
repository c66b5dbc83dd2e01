import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { runBin } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { renderReport, type ReportData } from '../src/index.js';
import { NASTY_TEXT } from './fixtures.js';

/**
 * report.html of a real run, opened in headless Chromium as a user would: no console or page error, every chart
 * drawn, zoom, the log switch and the rollout filters working, text from rollouts shown as text. Screenshots go to
 * .drmas-cache/report-screenshots/, or to the folder `DRMAS_REPORT_SCREENSHOTS` names. `DRMAS_REPORT_RUN_DIR` names
 * a finished run to use; otherwise the test trains a short one. The docs' screenshots come from the main job:
 * `DRMAS_SLOW_TESTS=1 DRMAS_REPORT_RUN_DIR=<its run> DRMAS_REPORT_SCREENSHOTS=docs/images jest plugins/report/test/browser.test.ts`.
 */
const CHROMIUM = process.env.DRMAS_CHROMIUM ?? '/usr/bin/chromium';
const IMAGES = path.resolve(REPO_ROOT, process.env.DRMAS_REPORT_SCREENSHOTS ?? path.join('.drmas-cache', 'report-screenshots'));
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.DRMAS_SLOW_TESTS === '1') {
  console.log(
    `report browser test skipped: no Chromium at ${CHROMIUM} (run bash scripts/install-test-deps.sh chromium, or set DRMAS_CHROMIUM)`,
  );
}

const scratch = new TempProject('report-browser');
afterAll(() => scratch.dispose());

(haveChromium ? describeSlow : describe.skip)('report.html in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let data: ReportData;
  const problems: string[] = [];

  beforeAll(async () => {
    const runDir = scratch.path('run');
    const given = process.env.DRMAS_REPORT_RUN_DIR;
    if (given) cpSync(given, runDir, { recursive: true });
    else {
      const args = ['train', '--config', 'examples/math/drmas.config.json', '--run-dir', runDir, '--set', 'trainer.steps=4'];
      const result = runBin([...args, '--set', 'eval.tasks=8', '--set', 'eval.k=4', '--set', 'report.html=false'], REPO_ROOT, 600_000);
      expect(result.code).toBe(0);
    }
    // A turn whose text would be markup if it were not escaped.
    const row = {
      step: 0,
      trajectoryId: 'nasty',
      taskId: 'nasty-task',
      agent: 'solver',
      index: 0,
      prompt: NASTY_TEXT,
      response: '</pre><img src=x onerror=alert(2)>',
      reward: 0.5,
      advantage: 0.1,
      outcome: 1,
      valid: true,
    };
    appendFileSync(path.join(runDir, 'rollouts.jsonl'), `${JSON.stringify(row)}\n`);
    const rendered = renderReport({ runDir });
    data = rendered.data;
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.setViewport({ width: 1400, height: 1000 });
    await page.goto(`file://${rendered.file}`, { waitUntil: 'load' });
  }, 700_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** A JavaScript expression evaluated in the page (text, so that the tests need no DOM types). */
  const inPage = <T>(expression: string): Promise<T> => page.evaluate(expression) as Promise<T>;

  test('no console error, page error, failed request or dialog', () => {
    expect(problems).toEqual([]);
  });

  test('every planned chart is drawn: its canvas has ink and its visible series have points', async () => {
    const planned = data.panels.flatMap((p) => p.charts.map((c) => c.id));
    expect(planned.length).toBeGreaterThanOrEqual(10);
    const drawn = await inPage<Array<{ id: string; points: number; ink: number }>>(`
      [...document.querySelectorAll('figure[data-chart]')].map((f) => {
        const host = f.querySelector('.plot-host');
        const canvas = host.querySelector('canvas');
        const pixels = canvas ? canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data : [];
        let ink = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) ink++;
        return { id: f.dataset.chart, points: Number(host.dataset.points), ink };
      })`);
    expect(drawn.map((d) => d.id)).toEqual(planned);
    for (const chart of drawn) {
      expect([chart.id, chart.points > 0]).toEqual([chart.id, true]);
      expect([chart.id, chart.ink > 500]).toEqual([chart.id, true]);
    }
  });

  test('dragging across a chart zooms every chart to those steps; reset zooms out', async () => {
    const ranges = () => inPage<string[]>(`[...document.querySelectorAll('.plot-host')].map((h) => h.dataset.xRange)`);
    const before = await ranges();
    const over = (await page.$('figure[data-chart="outcome"] .u-over'))!;
    await over.scrollIntoView();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    const after = await ranges();
    expect(after[0]).not.toEqual(before[0]);
    const [min, max] = after[0]!.split(' ').map(Number);
    expect(max! - min!).toBeLessThan(Number(before[0]!.split(' ')[1]) - Number(before[0]!.split(' ')[0]));
    expect(new Set(after)).toEqual(new Set([after[0]]));
    await page.click('#reset-zoom');
    expect(await ranges()).toEqual(before);
  });

  test('the log-scale switch redraws the gradient norm on a log axis', async () => {
    const figure = 'figure[data-chart$="-grad_norm"]';
    const scale = () => inPage<string>(`document.querySelector('${figure} .plot-host').dataset.scale`);
    const start = await scale();
    await page.click(`${figure} input.log-toggle`);
    expect(await scale()).toBe(start === 'log' ? 'linear' : 'log');
  });

  test('rollout filters: by agent, by reward sign, by step, counted against the embedded episodes', async () => {
    const episodes = data.rollouts.episodes;
    const count = () =>
      inPage<{ episodes: number; turns: number }>(
        `(({ dataset }) => ({ episodes: Number(dataset.episodes), turns: Number(dataset.turns) }))(document.querySelector('#rollouts .count'))`,
      );
    const select = async (name: string, value: string) => {
      await page.select(`#rollouts select[name=${name}]`, value);
      return count();
    };
    const expected = (keep: (t: ReportData['rollouts']['episodes'][number]['turns'][number], step: number | null) => boolean) => {
      const matching = episodes.map((e) => e.turns.filter((t) => keep(t, e.step)).length).filter((n) => n > 0);
      return { episodes: matching.length, turns: matching.reduce((a, b) => a + b, 0) };
    };
    expect(await count()).toEqual(expected(() => true));
    expect(await select('agent', 'verifier')).toEqual(expected((t) => t.agent === 'verifier'));
    expect(await select('reward', 'positive')).toEqual(expected((t) => t.agent === 'verifier' && Number(t.reward) > 0));
    await select('agent', '');
    expect(await select('reward', 'zero')).toEqual(expected((t) => Number(t.reward) === 0));
    await select('reward', '');
    const step = String(episodes[0]!.step);
    expect(await select('step', step)).toEqual(expected((_t, s) => String(s) === step));
    await select('step', '');
    // the first 40 episodes are listed; "show more" adds the next 40
    const listed = () => inPage<number>(`document.querySelectorAll('#rollouts details.episode').length`);
    expect(await listed()).toBe(Math.min(40, expected(() => true).episodes));
  });

  test('rollout text is shown as text: a closing script tag and markup in a prompt stay characters', async () => {
    await page.select('#rollouts select[name=step]', '0');
    const texts = await inPage<string[]>(`[...document.querySelectorAll('#rollouts details.episode[open] pre')].map((p) => p.textContent)`);
    expect(texts).toContain(NASTY_TEXT);
    expect(texts).toContain('</pre><img src=x onerror=alert(2)>');
    expect(await page.$$('#rollouts img, #rollouts b, #rollouts script')).toHaveLength(0);
    await page.select('#rollouts select[name=step]', '');
    expect(problems).toEqual([]);
  });

  test('screenshots: overview, an agent panel, the rollout browser', async () => {
    mkdirSync(IMAGES, { recursive: true });
    // The sticky toolbar would cover the top of an element scrolled into view for its picture.
    await inPage<string>(`document.querySelector('.toolbar').style.position = 'static'`);
    const top = await inPage<number>(`document.getElementById('summary').getBoundingClientRect().top + window.scrollY`);
    const bottom = await inPage<number>(`document.getElementById('section-overview').getBoundingClientRect().bottom + window.scrollY`);
    await page.screenshot({
      path: path.join(IMAGES, 'report-overview.png'),
      clip: { x: 0, y: top - 10, width: 1400, height: bottom - top + 20 },
    });
    const agent = (await page.$('#section-agents .panel'))!;
    await agent.screenshot({ path: path.join(IMAGES, 'report-agent.png') });
    // an episode with a reward, opened
    await page.select('#rollouts select[name=reward]', 'positive');
    const rollouts = (await page.$('#rollouts'))!;
    const box = (await rollouts.boundingBox())!;
    const y = await inPage<number>('window.scrollY');
    await page.screenshot({
      path: path.join(IMAGES, 'report-rollouts.png'),
      clip: { x: 0, y: box.y + y - 10, width: 1400, height: Math.min(box.height + 20, 1100) },
    });
    for (const name of ['overview', 'agent', 'rollouts'])
      expect(readFileSync(path.join(IMAGES, `report-${name}.png`)).length).toBeGreaterThan(20_000);
  });
});
