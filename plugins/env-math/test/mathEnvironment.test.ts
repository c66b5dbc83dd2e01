import { describe, expect, test } from '@jest/globals';
import { MathEnvironment } from '../src/index.js';

/** Outcome and metrics of one submitted solution, on a training or a held-out problem; `judge` must agree. */
async function scored(checkSteps: boolean | undefined, split: 'train' | 'test', solution: (answer: string) => string) {
  const environment = new MathEnvironment({ seed: 5, levels: [1], testSize: 2, ...(checkSteps === undefined ? {} : { checkSteps }) });
  await environment.init();
  const task = split === 'train' ? environment.batch(0, 1).tasks[0]! : environment.test()[0]!;
  expect(task.split).toBe(split);
  const episode = environment.reset(task);
  await environment.advance([episode], [{ type: 'answer', content: solution(task.answer) }]);
  const judged = episode.judge({ type: 'answer', content: solution(task.answer) });
  expect(judged).toBe(episode.outcome);
  return { outcome: episode.outcome, roundScore: episode.roundScore, metrics: episode.metrics() };
}

const trueSteps = (answer: string) => `2+3=5, 7*8=56. \\boxed{${answer}}`;
const falseStep = (answer: string) => `2+3=5, 7*8=54. \\boxed{${answer}}`;
const wrongAnswer = (answer: string) => `2+3=5. \\boxed{${Number(answer) + 1}}`;

describe('MathEnvironment.checkSteps', () => {
  test('off (the default): a right answer scores 1 whatever its steps; the metrics still flag the false step', async () => {
    expect(await scored(undefined, 'train', falseStep)).toEqual({
      outcome: 1,
      roundScore: 1,
      metrics: { answered: 1, false_step: 1, right_after_false_step: 1 },
    });
    expect(await scored(false, 'train', trueSteps)).toEqual({
      outcome: 1,
      roundScore: 1,
      metrics: { answered: 1, false_step: 0, right_after_false_step: 0 },
    });
  });

  test("on: a training problem's right answer after a false claim scores 0; true steps still score 1", async () => {
    expect(await scored(true, 'train', falseStep)).toEqual({
      outcome: 0,
      roundScore: 0,
      metrics: { answered: 1, false_step: 1, right_after_false_step: 1 },
    });
    expect((await scored(true, 'train', trueSteps)).outcome).toBe(1);
    expect((await scored(true, 'train', (answer) => `\\boxed{${answer}}`)).outcome).toBe(1);
    expect(await scored(true, 'train', wrongAnswer)).toEqual({
      outcome: 0,
      roundScore: 0,
      metrics: { answered: 1, false_step: 0, right_after_false_step: 0 },
    });
  });

  test('on: held-out problems are scored on the answer alone, so evaluation measures what it always did', async () => {
    expect((await scored(true, 'test', falseStep)).outcome).toBe(1);
    expect((await scored(true, 'test', wrongAnswer)).outcome).toBe(0);
  });
});
