import { hashParts, type Question, type QuestionRequest, type QuestionSet } from '@drmas/core';
import type { DebateTask } from './DebateTask.js';

/** The data source of the debates on question set `name`: `debate-math`, `debate-motions`. */
export function debateSource(name: string): string {
  return `debate-${name}`;
}

const PLACES = ['Our town', 'The city', 'Every school', 'The village', 'Our office', 'The club', 'The county', 'The library'];
const POLICIES = [
  'ban cars from the centre',
  'plant a tree for every resident',
  'open on Sundays',
  'switch to solar power',
  'make public transport free',
  'start the day an hour later',
  'serve only vegetarian lunches',
  'replace paper forms with an app',
];

/** One motion in eight is held out (by a hash of its text, so the split does not depend on the seed or the order). */
export function isHeldOutMotion(motion: string): boolean {
  return hashParts('debate-motion', motion) % 8 === 0;
}

/** Every motion of the synthetic list (64), in a fixed order. */
export function syntheticMotions(): string[] {
  return PLACES.flatMap((place) => POLICIES.map((policy) => `Motion: ${place} should ${policy}.`));
}

/**
 * The QuestionSet `motions` env-debate contributes: the 64 motions of two word lists, none with an answer (the rule
 * judge's scores decide), one in eight held out by its text (whatever the seed or order), the first `testSize` of
 * those tested; every other motion trains (`trainSize` does not apply).
 */
export const motionQuestionSet: QuestionSet = Object.freeze({
  questions({ testSize }: QuestionRequest) {
    const all = syntheticMotions().map((question, i): Question => ({ id: `motion-${i}`, question }));
    return {
      train: all.filter((m) => !isHeldOutMotion(m.question)),
      test: all.filter((m) => isHeldOutMotion(m.question)).slice(0, testSize),
    };
  },
});

/**
 * Debate tasks on the questions of `set`, the QuestionSet `env.debate.tasks` names (`name`): env-math's `math`
 * (arithmetic with answers: the judged winner's final answer is checked) or `motions`. Deterministic for a request.
 */
export function debateTasks(set: QuestionSet, name: string, request: QuestionRequest): { train: DebateTask[]; test: DebateTask[] } {
  const { train, test } = set.questions(request);
  const task = (q: Question, split: DebateTask['split']): DebateTask => ({
    id: q.id,
    dataSource: debateSource(name),
    question: q.question,
    ...(q.answer !== undefined ? { answer: q.answer } : {}),
    split,
  });
  return { train: train.map((q) => task(q, 'train')), test: test.map((q) => task(q, 'test')) };
}
