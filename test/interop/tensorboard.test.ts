/**
 * TensorBoard's two readers (scripts/python/peers.txt) on the event files of a real drmas run (the math preset, the
 * tensorboard plugin): the Python `EventAccumulator` TensorBoard uses with `--load_fast=false`, and the Rust
 * `tensorboard-data-server` it uses by default, read through `tensorboard --load_fast=true`'s HTTP data API. Both list
 * every scalar, histogram and text series the files hold (read by the plugin's own wire decoder), the scalars with the
 * values of metrics.jsonl.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel } from '@drmas/core';
import { mathPreset } from '@drmas/preset-math';
import { describeInterop } from '../support/interopSuite.js';
import { readMetricLines } from '../support/runFiles.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { decodeEvent, readTfRecords } from '../../plugins/tensorboard/test/wireDecoder.js';
import { freePort, runPython, ServerProcess } from './support.js';

interface Series {
  scalars: Record<string, Array<[number, number]>>;
  histograms: Record<string, Array<[number, number]>>;
  text: Record<string, Array<[number, string]>>;
}

const scratch = new TempProject('interop-tensorboard');
afterAll(() => scratch.dispose());
const runDir = scratch.path('math');
const logDir = path.join(runDir, 'tb');

/** What the event files hold, by the plugin's wire decoder: per kind, tag -> [step, value] (histograms: the count). */
function written(): Series {
  const out: Series = { scalars: {}, histograms: {}, text: {} };
  for (const name of readdirSync(logDir).sort()) {
    for (const event of readTfRecords(readFileSync(path.join(logDir, name))).map(decodeEvent)) {
      for (const [tag, value] of event.scalars) (out.scalars[tag] ??= []).push([event.step, value]);
      for (const [tag, h] of event.histograms) (out.histograms[tag] ??= []).push([event.step, h.num]);
      for (const [tag, t] of event.texts) (out.text[tag] ??= []).push([event.step, t.text]);
    }
  }
  return out;
}

const sortedKeys = (record: object) => Object.keys(record).sort();

describeInterop(
  'TensorBoard (EventAccumulator and the Rust data server)',
  'peers',
  (python) => {
    let files: Series;
    beforeAll(async () => {
      const { kernel } = await createKernel({
        cwd: REPO_ROOT,
        inline: {
          presets: [mathPreset],
          plugins: [['tensorboard', {}]],
          tensorboard: { logDir: 'tb' },
          rollout: { promptsPerStep: 2, samplesPerPrompt: 4 },
          agents: { solver: { train: { miniBatches: 2 } }, verifier: { train: { miniBatches: 2 } } },
          eval: { atEnd: false },
          report: { html: false, progress: 'off' },
          trainer: { steps: 2, seed: 0 },
        },
      });
      await kernel.run({ runDir, log: () => {} });
      files = written();
    });

    test('the run wrote scalars, histograms (the gradient norms under their own tag) and text', () => {
      expect(Object.keys(files.scalars).length).toBeGreaterThan(20);
      expect(files.histograms['actor/policy/grad_norm/histogram']).toEqual([
        [1, 2],
        [2, 2],
      ]);
      expect(files.scalars['actor/policy/grad_norm']).toHaveLength(2);
      expect(files.text.rollouts?.map(([step]) => step)).toEqual([1, 2]);
    });

    test("Python's EventAccumulator lists every series, with metrics.jsonl's values", () => {
      const read = runPython<Series>(python, 'tensorboard_accumulator.py', [logDir]);
      expect(sortedKeys(read.scalars)).toEqual(sortedKeys(files.scalars));
      expect(sortedKeys(read.histograms)).toEqual(sortedKeys(files.histograms));
      expect(sortedKeys(read.text)).toEqual(sortedKeys(files.text));
      for (const line of readMetricLines(runDir)) {
        for (const [key, value] of Object.entries(line)) {
          if (key !== 'step')
            expect([key, read.scalars[key]!.find(([step]) => step === line.step)?.[1]]).toEqual([key, Math.fround(value)]);
        }
      }
      expect(read.histograms).toEqual(files.histograms);
      expect(read.text).toEqual(files.text);
    });

    test("the Rust data server (tensorboard --load_fast=true) lists every series, with metrics.jsonl's values", async () => {
      const port = await freePort();
      const tensorboard = path.join(path.dirname(python), 'tensorboard');
      const server = new ServerProcess(tensorboard, [
        '--logdir',
        logDir,
        '--load_fast=true',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--reload_interval',
        '1',
        '--samples_per_plugin',
        'scalars=100000,histograms=10000,text=10000',
      ]);
      try {
        const base = `http://127.0.0.1:${port}/data/plugin`;
        await server.waitFor(`http://127.0.0.1:${port}/data/runs`, 120_000);
        const get = async <T>(url: string): Promise<T> => (await (await fetch(`${base}/${url}`)).json()) as T;
        // The data server loads the files in the background: wait until it lists the last tag the run wrote.
        let scalarTags: Record<string, Record<string, unknown>> = {};
        for (let tries = 0; tries < 240; tries++) {
          scalarTags = await get('scalars/tags');
          if (Object.keys(scalarTags['.'] ?? {}).length >= Object.keys(files.scalars).length) break;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect(server.output.join('')).not.toMatch(/falling back to the Python/i);
        const histogramTags = await get<Record<string, Record<string, unknown>>>('histograms/tags');
        // The text plugin answers a list of tags per run, the others an object keyed by tag.
        const textTags = await get<Record<string, string[]>>('text/tags');
        expect(sortedKeys(scalarTags['.'] ?? {})).toEqual(sortedKeys(files.scalars));
        expect(sortedKeys(histogramTags['.'] ?? {})).toEqual(sortedKeys(files.histograms));
        expect([...(textTags['.'] ?? [])].sort()).toEqual(sortedKeys(files.text));

        for (const line of readMetricLines(runDir)) {
          for (const [key, value] of Object.entries(line)) {
            if (key === 'step') continue;
            const points = await get<Array<[number, number, number]>>(`scalars/scalars?run=.&tag=${encodeURIComponent(key)}`);
            expect([key, points.find(([, step]) => step === line.step)?.[2]]).toEqual([key, Math.fround(value)]);
          }
        }
        for (const [tag, series] of Object.entries(files.histograms)) {
          const points = await get<Array<[number, number, Array<[number, number, number]>]>>(
            `histograms/histograms?run=.&tag=${encodeURIComponent(tag)}`,
          );
          expect([tag, points.map(([, step, buckets]) => [step, buckets.reduce((sum, [, , count]) => sum + count, 0)])]).toEqual([
            tag,
            series,
          ]);
        }
        const texts = await get<Array<{ step: number; text: string }>>('text/text?run=.&tag=rollouts');
        expect(texts.map((t) => t.step)).toEqual([1, 2]);
        // Rendered from the Markdown the plugin wrote: its first heading, as HTML.
        const heading = /^### (.+)$/m.exec(files.text.rollouts![0]![1])![1]!;
        expect(texts[0]!.text).toContain(`<h3>${heading}</h3>`);
      } finally {
        await server.stop();
      }
    });
  },
  (python) => (existsSync(path.join(path.dirname(python), 'tensorboard')) ? undefined : 'the peers environment has no tensorboard command'),
);
