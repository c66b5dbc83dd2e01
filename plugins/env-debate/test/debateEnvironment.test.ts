import { afterAll, describe, expect, test } from '@jest/globals';
import { DrmasError } from '@drmas/core';
import { createDebateOrchestra, debateTranscript, TRANSCRIPT_SUBMISSION } from '@drmas/plugin-orchestra';
import type { Turn } from '@drmas/core';
import { TempProject } from '../../../test/support/tempProject.js';
import { DebateEnvironment, loadDebateDataset, syntheticDebateTasks, syntheticMotions } from '../src/index.js';

const scratch = new TempProject('env-debate');
afterAll(() => scratch.dispose());

describe('synthetic debate tasks', () => {
  test('math: deterministic, with answers, the held-out questions never trained on', () => {
    const options = { kind: 'math' as const, seed: 5, levels: [1, 2], trainSize: 300, testSize: 40 };
    const a = syntheticDebateTasks(options);
    expect(syntheticDebateTasks(options)).toEqual(a);
    expect(a.train).toHaveLength(300);
    expect(a.test).toHaveLength(40);
    expect(a.train.every((t) => t.answer !== undefined && t.split === 'train')).toBe(true);
    const held = new Set(a.test.map((t) => t.question));
    expect(a.train.filter((t) => held.has(t.question))).toEqual([]);
  });

  test('motions: 64 from the word lists, one in eight held out by its text, no answers', () => {
    expect(new Set(syntheticMotions()).size).toBe(64);
    const { train, test: held } = syntheticDebateTasks({ kind: 'motions', seed: 0, levels: [1], trainSize: 1, testSize: 100 });
    expect(train.length + held.length).toBe(64);
    expect(held.length).toBeGreaterThan(0);
    expect([...train, ...held].every((t) => t.answer === undefined)).toBe(true);
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

describe('DebateEnvironment episodes', () => {
  test('asks the orchestra for the transcript, judges it, and scores each agent through judge()', async () => {
    const environment = new DebateEnvironment({ seed: 1, debate: { testSize: 4, trainSize: 8 } });
    await environment.init();
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
    await environment.step([episode], [action]);
    expect({ done: episode.done, outcome: episode.outcome }).toEqual({ done: true, outcome: 1 });
    // Each agent's reward also as a metric, which crosses an environment server (the debate orchestra reads it).
    expect(episode.metrics()).toEqual({ correct: 1, tie: 0, consistency: 1, evidence: 0.5, structure: 0, reward_pro: 1, reward_con: 0 });
  });

  test('the debate orchestra scores each turn from the judged episode, with no judge() (as over an environment server)', async () => {
    const environment = new DebateEnvironment({ seed: 1, debate: { testSize: 4, trainSize: 8, reward: 'score' } });
    await environment.init();
    const task = environment.batch(0, 1).tasks[0]!;
    const turn = (index: number, agentId: string, text: string) => ({ index, agentId, responseText: text, step: 0 }) as Turn;
    const turns = [turn(0, 'pro', `\\boxed{${task.answer}}`), turn(1, 'con', '\\boxed{-999}'), turn(2, 'pro', `\\boxed{${task.answer}}`)];
    const orchestra = createDebateOrchestra();
    const episode = environment.reset(task);
    await environment.step(
      [episode],
      [{ type: TRANSCRIPT_SUBMISSION.actionType, content: JSON.stringify(debateTranscript(turns, ['pro', 'con'])) }],
    );
    // Scores: PRO (0 + 0.5 + 1 + 3)/6 on both its turns, CON (0 + 0.5 + 1 + 0)/6.
    const scores = orchestra.turnScores!(turns, undefined, episode);
    expect([...scores.keys()]).toEqual([0, 1, 2]);
    expect(scores.get(0)).toBeCloseTo(4.5 / 6, 12);
    expect(scores.get(1)).toBeCloseTo(1.5 / 6, 12);
    expect(scores.get(2)).toBeCloseTo(4.5 / 6, 12);
  });

  test('an unreadable transcript or another action type is judged as a plain answer', async () => {
    const environment = new DebateEnvironment({ seed: 1, debate: { testSize: 4, trainSize: 8 } });
    await environment.init();
    const task = environment.batch(0, 1).tasks[0]!;
    const bad = environment.reset(task);
    await environment.step([bad], [{ type: TRANSCRIPT_SUBMISSION.actionType, content: '{not json' }]);
    expect(bad.outcome).toBe(0);
    const answer = environment.reset(task);
    await environment.step([answer], [{ type: 'answer', content: `so \\boxed{${task.answer}}` }]);
    expect(answer.outcome).toBe(1);
  });
});
