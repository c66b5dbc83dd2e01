import { AnswerFormat, extractBoxedAnswer, QuestionSet, type Plugin, type Question, type QuestionRequest } from '@drmas/core';

/**
 * An answer format of exact answers: the last `\boxed{}` (core's reader), equal only as the same string. A run gets
 * env-math's `math` format; the judge's arithmetic is checked here with answers that compare the same either way.
 */
export const EXACT_ANSWERS: AnswerFormat = { extract: extractBoxedAnswer, equal: (answer, reference) => answer === reference };

/** Questions with answers: `What is i + 10?` (training) and `What is 2i + 1?` (held out), as many as asked. */
export const SUMS: QuestionSet = {
  questions: ({ trainSize, testSize }: QuestionRequest) => {
    const question = (id: string, a: number, b: number): Question => ({ id, question: `What is ${a} + ${b}?`, answer: String(a + b) });
    return {
      train: Array.from({ length: trainSize }, (_, i) => question(`sum-${i}`, i, 10)),
      test: Array.from({ length: testSize }, (_, i) => question(`held-${i}`, i, i + 1)),
    };
  },
};

/** Provides `EXACT_ANSWERS` as the answer format `exact` and `SUMS` as the question set `sums`. */
export const sumsPlugin: Plugin = {
  name: 'sums',
  register(ctx) {
    ctx.provide(AnswerFormat, 'exact', EXACT_ANSWERS);
    ctx.provide(QuestionSet, 'sums', SUMS);
  },
};
