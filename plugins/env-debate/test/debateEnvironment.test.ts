import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel, DrmasError, Environment, TRANSCRIPT_SUBMISSION, type Plugin } from '@drmas/core';
import { TempProject } from '../../../test/support/tempProject.js';
import envDebatePlugin, {
  debateTasks,
  loadDebateDataset,
  motionQuestionSet,
  syntheticMotions,
  type DebateEnvironment,
} from '../src/index.js';
import { SUMS, sumsPlugin } from './fixtures.js';

const scratch = new TempProject('env-debate');
afterAll(() => scratch.dispose());

describe('debate tasks from question sets', () => {
  test("a set's questions with their answers and splits, the data source named after the set", () => {
    const { train, test: held } = debateTasks(SUMS, 'sums', { seed: 5, trainSize: 2, testSize: 1 });
    expect(train).toEqual([
      { id: 'sum-0', dataSource: 'debate-sums', question: 'What is 0 + 10?', answer: '10', split: 'train' },
      { id: 'sum-1', dataSource: 'debate-sums', question: 'What is 1 + 10?', answer: '11', split: 'train' },
    ]);
    expect(held).toEqual([{ id: 'held-0', dataSource: 'debate-sums', question: 'What is 0 + 1?', answer: '1', split: 'test' }]);
  });

  test('motions: 64 from the word lists, one in eight held out by its text, no answers', () => {
    expect(new Set(syntheticMotions()).size).toBe(64);
    const { train, test: held } = debateTasks(motionQuestionSet, 'motions', { seed: 0, levels: [1], trainSize: 1, testSize: 100 });
    expect(train.length + held.length).toBe(64);
    expect(held.length).toBeGreaterThan(0);
    expect([...train, ...held].every((t) => t.answer === undefined && t.dataSource === 'debate-motions')).toBe(true);
    const heldOut = new Set(held.map((t) => t.question));
    expect(train.filter((t) => heldOut.has(t.question))).toEqual([]);
  });
});

describe('loadDebateDataset', () => {
  test('JSONL records with question or motion, optional answer and split', async () => {
    scratch.write({
      'debates.jsonl': [
        '{"question":"What is 2+2?","answer":4}',
        '',
        '{"motion":"Cats are better than dogs.","split":"test","id":"m1"}',
      ].join('\n'),
    });
    const file = scratch.path('debates.jsonl');
    const tasks = await loadDebateDataset(file);
    expect(tasks).toEqual([
      { id: 'debates-0', dataSource: 'debates', question: 'What is 2+2?', answer: '4', split: 'train' },
      { id: 'm1', dataSource: 'debates', question: 'Cats are better than dogs.', split: 'test' },
    ]);
  });

  test.each([
    ['bad.jsonl', '{"question":"ok"}\n{"answer":"3"}', /line 2: no "question"/, 'question'],
    ['bad2.jsonl', '{"question":"q","split":"dev"}', /line 1: "split" must be "train" or "test"/, 'split'],
    ['bad3.jsonl', '{"question":', /line 1: invalid JSON/, undefined],
    ['bad4.json', '{"rows": []}', /expected a JSON array/, undefined],
  ])('%s is DATASET_INVALID naming the file and place', async (name, content, message, key) => {
    scratch.write({ [name]: content });
    const file = scratch.path(name);
    const error = (await loadDebateDataset(file).catch((e: unknown) => e)) as DrmasError;
    expect(DrmasError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'DATASET_INVALID', file, key });
    expect(error.message).toMatch(message);
  });
});

/** A kernel with env-debate and `plugins`, the `debate` environment initialized. */
async function debateEnvironment(debate: Record<string, unknown>, plugins: Plugin[] = [sumsPlugin]): Promise<DebateEnvironment> {
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: { plugins: [envDebatePlugin(), ...plugins], env: { name: 'debate', seed: 1, debate } },
  });
  const environment = kernel.getNamed(Environment, 'debate') as DebateEnvironment;
  await environment.init();
  return environment;
}

const SUM_DEBATES = { tasks: 'sums', answerFormat: 'exact', testSize: 4, trainSize: 8 };

describe('DebateEnvironment in a kernel', () => {
  test('its questions come from the QuestionSet env.debate.tasks names, the held-out ones apart', async () => {
    const environment = await debateEnvironment(SUM_DEBATES);
    expect(environment.test().map((t) => t.id)).toEqual(['held-0', 'held-1', 'held-2', 'held-3']);
    expect(new Set(environment.batch(0, 8).tasks.map((t) => t.id))).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `sum-${i}`)));
  });

  test('motions come from env-debate itself', async () => {
    const environment = await debateEnvironment({ tasks: 'motions', answerFormat: 'exact', testSize: 4 });
    expect(environment.test()).toHaveLength(4);
    expect(environment.batch(0, 1).tasks[0]).toMatchObject({ dataSource: 'debate-motions' });
  });

  test.each([
    ['a question set no plugin provides', { ...SUM_DEBATES, tasks: 'math' }, 'env.debate.tasks', /no question set named "math"/],
    ['a misspelt one', { ...SUM_DEBATES, tasks: 'sum' }, 'env.debate.tasks', /no question set named "sum"/],
    [
      'an answer format no plugin provides',
      { ...SUM_DEBATES, answerFormat: 'math' },
      'env.debate.answerFormat',
      /no answer format named "math"/,
    ],
  ])('%s stops the run at validate, naming the key and what is registered', async (_, debate, key, message) => {
    const error = await debateEnvironment(debate).catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key }).toEqual({ code: 'UNKNOWN_NAME', key });
    expect((error as Error).message).toMatch(message);
  });
});

describe('DebateEnvironment episodes', () => {
  test('asks the orchestra for the transcript, judges it, and scores each agent through judge()', async () => {
    const environment = await debateEnvironment(SUM_DEBATES);
    const task = environment.batch(0, 1).tasks[0]!;
    const episode = environment.reset(task);
    expect(episode.variables()[TRANSCRIPT_SUBMISSION.variable]).toBe(TRANSCRIPT_SUBMISSION.value);
    const content = JSON.stringify({
      debaters: ['pro', 'con'],
      turns: [
        { agent: 'pro', round: 1, text: `\\boxed{${task.answer}}` },
        { agent: 'con', round: 1, text: '\\boxed{-999}' },
      ],
    });
    const action = { type: TRANSCRIPT_SUBMISSION.actionType, content };
    // PRO right: (0 + 0.5 + 1 + 3)/6 beats CON (0 + 0.5 + 1 + 0)/6: PRO wins, the outcome is 1.
    expect([episode.judge({ ...action, agentId: 'pro' }), episode.judge({ ...action, agentId: 'con' })]).toEqual([1, 0]);
    await environment.advance([episode], [action]);
    expect({ done: episode.done, outcome: episode.outcome }).toEqual({ done: true, outcome: 1 });
    // Each agent's reward also as a metric, which crosses an environment server (the debate orchestra reads it).
    expect(episode.metrics()).toEqual({ correct: 1, tie: 0, consistency: 1, evidence: 0.5, structure: 0, reward_pro: 1, reward_con: 0 });
  });

  test('an unreadable transcript or another action type is judged as a plain answer', async () => {
    const environment = await debateEnvironment(SUM_DEBATES);
    const task = environment.batch(0, 1).tasks[0]!;
    const bad = environment.reset(task);
    await environment.advance([bad], [{ type: TRANSCRIPT_SUBMISSION.actionType, content: '{not json' }]);
    expect(bad.outcome).toBe(0);
    const answer = environment.reset(task);
    await environment.advance([answer], [{ type: 'answer', content: `so \\boxed{${task.answer}}` }]);
    expect(answer.outcome).toBe(1);
  });
});
