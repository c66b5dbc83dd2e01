import { extractBoxedAnswer } from '@drmas/core';
import {
  ArithmeticTaskSource,
  extractVerifierVerdict,
  mathAnswersEqual,
  solverDemonstration,
  verifierDemonstration,
  type MathTask,
} from '../src/index.js';

describe('demonstrations', () => {
  const source = new ArithmeticTaskSource({ seed: 2, levels: [1, 2, 3, 4, 5], testSize: 0 });
  const tasks = Array.from({ length: 300 }, (_, i) => source.train(i));

  test('solver demonstrations show the steps and end in the boxed answer', () => {
    for (const task of tasks) {
      const text = solverDemonstration(task);
      expect(text.endsWith(`\\boxed{${task.answer}}`)).toBe(true);
      expect(extractBoxedAnswer(text)).toBe(task.answer);
      expect(text.length).toBeLessThan(120);
    }
    const fraction = tasks.find((t) => t.difficulty === 4 && /\+/.test(t.question))!;
    expect(solverDemonstration(fraction)).toMatch(/^\d+\/\d+\+\d+\/\d+=.*=-?\d+(\/\d+)?\. \\boxed\{/);
  });

  test('the word problem of the brief', () => {
    const task: MathTask & { steps: string[][]; difficulty: number } = {
      id: 'x',
      question: 'A shop has 12 apples, sells 5 and buys 8 more. How many apples does it have?',
      answer: '15',
      dataSource: 'synthetic-arithmetic',
      difficulty: 5,
      split: 'train',
      steps: [
        ['12-5', '7'],
        ['7+8', '15'],
      ],
    };
    expect(solverDemonstration(task)).toBe('12-5=7. 7+8=15. \\boxed{15}');
    expect(verifierDemonstration(task, '15')).toBe('12-5=7. 7+8=15. 15 is right. <verify>approve</verify>');
    expect(verifierDemonstration(task, '14')).toBe('12-5=7. 7+8=15. 14 is wrong. <verify>reject</verify>');
  });

  test('verifier demonstrations approve exactly the equivalent answers', () => {
    for (const task of tasks.slice(0, 50)) {
      expect(extractVerifierVerdict(verifierDemonstration(task, task.answer))).toBe('approve');
      expect(extractVerifierVerdict(verifierDemonstration(task, `${task.answer}1`))).toBe('reject');
      expect(extractVerifierVerdict(verifierDemonstration(task, undefined))).toBe('reject');
    }
    const half = { ...tasks[0]!, answer: '1/2' };
    expect(extractVerifierVerdict(verifierDemonstration(half, '0.5'))).toBe('approve');
    expect(mathAnswersEqual('0.5', half.answer)).toBe(true);
  });

  test('tasks without steps (datasets) get the boxed answer alone', () => {
    const task: MathTask = { id: 'd', question: 'q', answer: '\\frac{1}{2}', dataSource: 'd', split: 'test' };
    expect(solverDemonstration(task)).toBe('\\boxed{\\frac{1}{2}}');
    expect(verifierDemonstration(task, '1/2')).toBe('1/2 is right. <verify>approve</verify>');
  });

  test('extractVerifierVerdict takes the last tag', () => {
    expect(extractVerifierVerdict('<verify>reject</verify> hmm <verify>approve</verify>')).toBe('approve');
    expect(extractVerifierVerdict('no tag')).toBeUndefined();
  });
});
