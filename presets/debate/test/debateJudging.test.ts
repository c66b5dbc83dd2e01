import { describe, expect, test } from '@jest/globals';
import { createKernel, Environment, TRANSCRIPT_SUBMISSION, type Turn } from '@drmas/core';
import envDebatePlugin, { type DebateEnvironment } from '@drmas/plugin-env-debate';
import envMathPlugin, { ArithmeticTaskSource, mathAnswerFormat } from '@drmas/plugin-env-math';
import { createDebateOrchestra, debateTranscript } from '@drmas/plugin-orchestra';
import { DEBATE_DEFAULTS } from '../src/index.js';

/** The preset's debates on env-math's questions and answer format: env-math and env-debate in one kernel. */
async function mathDebates(debate: Record<string, unknown> = {}): Promise<DebateEnvironment> {
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [envMathPlugin(), envDebatePlugin()],
      env: { ...DEBATE_DEFAULTS.env, debate: { ...DEBATE_DEFAULTS.env!.debate, ...debate } },
    },
  });
  const environment = kernel.getNamed(Environment, 'debate') as DebateEnvironment;
  await environment.init();
  return environment;
}

describe("debates on env-math's questions, judged by its answer format", () => {
  test("the preset's questions are env-math's arithmetic (levels 1 and 2), with their answers and held-out split", async () => {
    const environment = await mathDebates({ trainSize: 16, testSize: 8 });
    const source = new ArithmeticTaskSource({ seed: 0, levels: [1, 2], trainSize: 16, testSize: 8 });
    const asDebate = (split: 'train' | 'test') => (t: { id: string; question: string; answer: string }) => ({
      id: t.id,
      dataSource: 'debate-math',
      question: t.question,
      answer: t.answer,
      split,
    });
    expect(environment.test()).toEqual(source.test().map(asDebate('test')));
    // The first epoch hands out the whole pool once, in its own order.
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    const pool = Array.from({ length: 16 }, (_, i) => asDebate('train')(source.train(i)));
    expect(environment.batch(0, 16).tasks.sort(byId)).toEqual(pool.sort(byId));
  });

  test('an answer equal as math is right: 0.5 for 1/2, 4.0 for 4', async () => {
    const environment = await mathDebates();
    const task = { id: 'q', dataSource: 'debate-math', question: 'What is 1/4 + 1/4?', answer: '1/2', split: 'train' as const };
    const episode = environment.reset(task);
    expect(episode.judge({ type: 'answer', content: 'so \\boxed{0.5}' })).toBe(1);
    expect(episode.judge({ type: 'answer', content: 'so \\boxed{\\frac{2}{4}}' })).toBe(1);
    expect(episode.judge({ type: 'answer', content: 'so \\boxed{0.25}' })).toBe(0);
  });

  test('the debate orchestra scores each turn from the judged episode, with no judge() (as over an environment server)', async () => {
    const environment = await mathDebates({ reward: 'score' });
    const task = environment.batch(0, 1).tasks[0]!;
    const turn = (index: number, agentId: string, text: string) => ({ index, agentId, responseText: text, round: 0 }) as Turn;
    const turns = [turn(0, 'pro', `\\boxed{${task.answer}}`), turn(1, 'con', '\\boxed{-999}'), turn(2, 'pro', `\\boxed{${task.answer}}`)];
    const orchestra = createDebateOrchestra({ answers: () => mathAnswerFormat });
    const episode = environment.reset(task);
    expect(episode.variables()[TRANSCRIPT_SUBMISSION.variable]).toBe(TRANSCRIPT_SUBMISSION.value);
    await environment.advance(
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
});
