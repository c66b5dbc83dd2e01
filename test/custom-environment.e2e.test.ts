import { afterAll, describe, expect, test } from '@jest/globals';
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, DrmasError, type EnvAction } from '@drmas/core';
import { ListsEnvironment } from '../examples/custom-environment/index.js';
import { runCli } from './support/cliRunner.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

interface ListTask {
  id: string;
  dataSource: string;
  question: string;
  answer: string;
  split: 'train' | 'test';
}

const example = path.join(REPO_ROOT, 'examples', 'custom-environment');
const scratch = new TempProject('custom-env');
afterAll(() => scratch.dispose());

async function environment(settings: Record<string, unknown>): Promise<ListsEnvironment> {
  const env = new ListsEnvironment(settings);
  await env.init();
  return env;
}

/** The digits a question lists, read back from its text. */
const digitsIn = (question: string) => (question.match(/\d/g) ?? []).map(Number);
const sortedKey = (task: ListTask) => digitsIn(task.question).sort().join('');

describe('examples/custom-environment: the lists environment', () => {
  test('answers are the largest digit, the list sorted, the list reversed', async () => {
    const expected = {
      max: (d: number[]) => String(Math.max(...d)),
      sort: (d: number[]) => [...d].sort((a, b) => a - b).join(', '),
      reverse: (d: number[]) => [...d].reverse().join(', '),
    };
    for (const [operation, answer] of Object.entries(expected)) {
      const tasks = (await environment({ seed: 1, lists: { operation, length: 4 } })).batch(0, 40).tasks as ListTask[];
      for (const task of tasks) {
        expect(digitsIn(task.question)).toHaveLength(4);
        expect(task.answer).toBe(answer(digitsIn(task.question)));
        expect(task.dataSource).toBe(`lists-${operation}`);
      }
    }
  });

  test('the task stream is a function of the seed and the cursor, and never shows a held-out list', async () => {
    const a = await environment({ seed: 3 });
    const b = await environment({ seed: 3 });
    const stream = a.batch(0, 2000).tasks as ListTask[];
    expect(b.batch(0, 2000).tasks).toEqual(stream);
    expect(a.batch(10, 5)).toEqual({ tasks: stream.slice(10, 15), nextCursor: 15 });
    expect((await environment({ seed: 4 })).batch(0, 20).tasks.map((t) => t.question)).not.toEqual(
      stream.slice(0, 20).map((t) => t.question),
    );
    const held = a.test() as ListTask[];
    expect(held).toHaveLength(32);
    expect(new Set(held.map((t) => t.question)).size).toBe(32);
    // Held out by the digits in sorted order, so no reordering of a held-out list is trained on either.
    const trained = new Set(stream.map(sortedKey));
    expect(held.filter((t) => trained.has(sortedKey(t)))).toEqual([]);
    expect(held.every((t) => t.split === 'test')).toBe(true);
  });

  test('scores the last \\boxed{} of an answer, separators aside; judge agrees with advance', async () => {
    const env = await environment({ lists: { operation: 'sort' } });
    const task: ListTask = {
      id: 'x',
      dataSource: 'lists-sort',
      question: 'Sort 7, 2, 5 from smallest to largest.',
      answer: '2, 5, 7',
      split: 'train',
    };
    const cases: Array<[EnvAction, number, number]> = [
      [{ type: 'answer', content: '\\boxed{2, 5, 7}' }, 1, 1],
      [{ type: 'answer', content: '<think>\\boxed{7 5 2}</think> so \\boxed{[2,5,7]}' }, 1, 1],
      [{ type: 'answer', content: '\\boxed{7, 5, 2}' }, 0, 1],
      [{ type: 'answer', content: '2, 5, 7' }, 0, 0],
      [{ type: 'invalid', content: '\\boxed{2, 5, 7}' }, 0, 0],
    ];
    for (const [action, outcome, answered] of cases) {
      const episode = env.reset(task);
      expect(episode.judge(action)).toBe(outcome);
      await env.advance([episode], [action]);
      expect({ done: episode.done, outcome: episode.outcome, roundScore: episode.roundScore, metrics: episode.metrics() }).toEqual({
        done: true,
        outcome,
        roundScore: outcome,
        metrics: { answered },
      });
    }
  });

  test('a held-out split too small for env.lists.testSize names the key', async () => {
    // 81 lists of two digits, about a tenth of them held out.
    const error = await environment({ lists: { length: 2, testSize: 50 } }).catch((e: unknown) => e);
    expect(DrmasError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'env.lists.testSize' });
  });
});

describe('examples/custom-environment as an installed package', () => {
  const project = scratch;
  cpSync(example, project.path('node_modules', 'drmas-plugin-env-lists'), {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}runs`),
  });
  project.write({
    'drmas.config.json': {
      presets: ['math'],
      plugins: ['env-lists'],
      env: { name: 'lists', lists: { operation: 'sort' } },
      models: { policy: { model: 'tiny', rollout: 'tfjs' } },
      agents: { solver: { sampling: { maxNewTokens: 12 } }, verifier: { sampling: { maxNewTokens: 12 } } },
      rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
      eval: { atEnd: false },
      report: { html: false, progress: 'off' },
      trainer: { steps: 1, seed: 0 },
    },
  });

  test('loads by name and trains a step of the math orchestra on the tiny model', async () => {
    const { kernel } = await createKernel({ cwd: project.dir });
    const loaded = kernel.plugins.find((p) => p.plugin.name === 'env-lists');
    expect(loaded?.packageName).toBe('drmas-plugin-env-lists');
    expect(loaded?.resolvedFrom).toBe(project.path('node_modules', 'drmas-plugin-env-lists', 'index.js'));
    const runDir = project.path('train-run');
    await kernel.run({ runDir });
    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.['episode/count']).toBe(4);
    expect(lines[0]).toHaveProperty('outcome/lists-sort/mean');
    expect(lines[0]?.['agent/solver/turns']).toBeGreaterThanOrEqual(4);
    expect(Number.isFinite(lines[0]?.['actor/policy/grad_norm'])).toBe(true);
  });

  test('drmas eval reports avg@k and pass@k on its held-out lists', async () => {
    const { code, stdout, stderr } = await runCli(
      ['eval', '--json', '--k', '2', '--set', 'eval.tasks=3', '--run-dir', project.path('eval-run')],
      project.dir,
    );
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    const metrics = JSON.parse(stdout) as Record<string, number>;
    expect(metrics['val/tasks']).toBe(3);
    for (const key of ['val/avg@2', 'val/pass@2', 'val/lists-sort/avg@2']) {
      expect(metrics[key]).toBeGreaterThanOrEqual(0);
      expect(metrics[key]).toBeLessThanOrEqual(1);
    }
  });
});
