import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, type UserConfig } from '@drmas/core';
import { mathPreset } from '@drmas/preset-math';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { assertOneKindPerTag, decodeEvent, readTfRecords, type DecodedEvent } from './wireDecoder.js';
import { readMetricLines } from '../../../test/support/runFiles.js';

const scratch = new TempProject('tensorboard-plugin');
afterAll(() => scratch.dispose());

/** Every event of every file in `dir`, file by file in the order they were written; no file uses a tag as two kinds. */
function eventFiles(dir: string): DecodedEvent[][] {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const events = readTfRecords(readFileSync(path.join(dir, name))).map(decodeEvent);
      assertOneKindPerTag(events);
      return events;
    });
}

async function train(config: UserConfig, runDir: string): Promise<void> {
  const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: config });
  await kernel.run({ runDir, log: () => {} });
}

const BANDIT: UserConfig = {
  plugins: [['bandit', { arms: 4, agents: ['proposer', 'checker'], groups: 2, samplesPerGroup: 8 }], 'tensorboard'],
  trainer: { steps: 3, seed: 7 },
};

describe('@drmas/plugin-tensorboard on the bandit example', () => {
  const runDir = scratch.path('bandit');

  test('every metrics.jsonl value is a scalar at its step (as float32)', async () => {
    await train(BANDIT, runDir);
    const events = eventFiles(path.join(runDir, 'tensorboard')).flat();
    for (const line of readMetricLines(runDir)) {
      const scalars = new Map(events.filter((e) => e.step === line.step).flatMap((e) => [...e.scalars]));
      for (const [key, value] of Object.entries(line))
        if (key !== 'step') expect([key, scalars.get(key)]).toEqual([key, Math.fround(value)]);
    }
  });

  test("per agent, histograms of its turns' rewards (sum = 16 x the step's outcome/mean) and advantages", () => {
    const events = eventFiles(path.join(runDir, 'tensorboard')).flat();
    for (const line of readMetricLines(runDir)) {
      const histograms = new Map(events.filter((e) => e.step === line.step).flatMap((e) => [...e.histograms]));
      for (const agent of ['proposer', 'checker']) {
        const rewards = histograms.get(`rewards/${agent}`)!;
        expect(rewards.num).toBe(16);
        expect(rewards.counts.reduce((a, c) => a + c, 0)).toBe(16);
        // Both agents' turns carry their episode's outcome, so each agent's rewards sum to 16 outcomes.
        expect(rewards.sum).toBeCloseTo(16 * line['outcome/mean']!, 10);
        // The bandit's advantage is reward minus its (group, agent) pool's mean: each pool sums to zero.
        expect(histograms.get(`advantages/${agent}`)!.sum).toBeCloseTo(0, 10);
      }
    }
  });

  test('two rollout episodes per step as Markdown for the Text dashboard', () => {
    const texts = eventFiles(path.join(runDir, 'tensorboard'))
      .flat()
      .filter((e) => e.texts.has('rollouts'));
    expect(texts.map((e) => e.step)).toEqual([1, 2, 3]);
    const { pluginName, text } = texts[0]!.texts.get('rollouts')!;
    expect(pluginName).toBe('text');
    expect(text).toContain('### s1-g0-t0 ');
    expect(text).toContain('### s1-g0-t1 ');
    expect(text).not.toContain('s1-g0-t2');
    expect(text).toMatch(/\*\*proposer\*\* \(turn 0\): reward [\d.]+, advantage/);
  });

  test('a fresh run in a used folder moves the earlier event files aside with that run, and starts its own', async () => {
    await train({ ...BANDIT, trainer: { steps: 1, seed: 7 } }, runDir);
    const [current, ...others] = eventFiles(path.join(runDir, 'tensorboard'));
    expect(others).toHaveLength(0);
    expect(current![0]!.fileVersion).toBe('brain.Event:2');
    expect(current![1]).toMatchObject({ step: 1, sessionStatus: 1 });
    expect(current!.filter((e) => e.scalars.size).map((e) => e.step)).toEqual([1]);
    const previous = readdirSync(runDir).filter((name) => name.startsWith('previous-'));
    expect(previous).toHaveLength(1);
    const earlier = eventFiles(path.join(runDir, previous[0]!, 'tensorboard')).flat();
    expect(earlier.filter((e) => e.scalars.size).map((e) => e.step)).toEqual([1, 2, 3]);
  });
});

describe('@drmas/plugin-tensorboard with the trainer', () => {
  test("a histogram of every optimizer step's gradient norm, matching the step's updates and grad_norm_max", async () => {
    const runDir = scratch.path('math');
    await train(
      {
        presets: [mathPreset],
        plugins: [['tensorboard', {}]],
        tensorboard: { logDir: 'tb', textSamples: 0 },
        rollout: { promptsPerStep: 2, samplesPerPrompt: 4 },
        agents: { solver: { train: { miniBatches: 2 } }, verifier: { train: { miniBatches: 2 } } },
        eval: { atEnd: false },
        report: { html: false, progress: 'off' },
        trainer: { steps: 1, seed: 0 },
      },
      runDir,
    );
    const [line] = readMetricLines(runDir);
    const events = eventFiles(path.join(runDir, 'tb')).flat();
    // The step's mean is the scalar `actor/policy/grad_norm`; the distribution has a tag of its own.
    const norms = events
      .find((e) => e.histograms.has('actor/policy/grad_norm/histogram'))!
      .histograms.get('actor/policy/grad_norm/histogram')!;
    expect(events.some((e) => e.histograms.has('actor/policy/grad_norm'))).toBe(false);
    expect(events.find((e) => e.scalars.has('actor/policy/grad_norm'))!.scalars.get('actor/policy/grad_norm')).toBe(
      Math.fround(line!['actor/policy/grad_norm']!),
    );
    expect(norms.num).toBe(line!['actor/policy/updates']);
    expect(norms.num).toBe(2);
    expect(norms.max).toBeGreaterThan(0);
    expect(norms.max).toBe(line!['actor/policy/grad_norm_max']);
    expect(norms.sum / norms.num).toBeCloseTo(line!['actor/policy/grad_norm']!, 10);
    expect(events.some((e) => e.texts.size)).toBe(false);
  });
});

const hasPythonTensorBoard = spawnSync('python3', ['-c', 'import tensorboard'], { encoding: 'utf8' }).status === 0;
if (!hasPythonTensorBoard)
  console.log('plugin-tensorboard: Python tensorboard is not installed (pip install tensorboard); its reader check is skipped');

(hasPythonTensorBoard ? describe : describe.skip)("Python tensorboard's own reader", () => {
  test('loads the bandit run: the scalars, histograms and text of every step', async () => {
    const runDir = scratch.path('python-reader');
    await train(BANDIT, runDir);
    const script = [
      'import json, sys',
      'from tensorboard.backend.event_processing.event_accumulator import EventAccumulator',
      "acc = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0, 'histograms': 0, 'tensors': 0})",
      'acc.Reload()',
      'tags = acc.Tags()',
      "print(json.dumps({'reward': [[e.step, e.value] for e in acc.Scalars('outcome/mean')], 'histograms': sorted(tags['histograms']), 'tensors': sorted(tags['tensors'])}))",
    ].join('\n');
    const result = spawnSync('python3', ['-c', script, path.join(runDir, 'tensorboard')], { encoding: 'utf8' });
    expect({ status: result.status, stderr: result.status === 0 ? '' : result.stderr }).toEqual({ status: 0, stderr: '' });
    const read = JSON.parse(result.stdout) as { reward: Array<[number, number]>; histograms: string[]; tensors: string[] };
    expect(read.reward).toEqual(readMetricLines(runDir).map((line) => [line.step, Math.fround(line['outcome/mean']!)]));
    expect(read.histograms).toEqual(['advantages/checker', 'advantages/proposer', 'rewards/checker', 'rewards/proposer']);
    expect(read.tensors).toContain('rollouts');
  });
});
