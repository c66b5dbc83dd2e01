import { hashParts } from '@drmas/core';
import { ArithmeticTaskSource } from '@drmas/plugin-env-math';
import type { DebateTask } from './DebateTask.js';

export const MATH_DEBATE_SOURCE = 'debate-math';
export const MOTION_SOURCE = 'debate-motions';

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

export interface SyntheticDebateOptions {
  kind: 'math' | 'motions';
  seed: number;
  /** Arithmetic levels of `math` questions (env-math's levels). */
  levels: number[];
  trainSize: number;
  testSize: number;
}

/**
 * Deterministic debate tasks with a held-out split: `math`, env-math's arithmetic questions with their answers
 * (verifiable: the judged winner's final answer is checked), or `motions`, 64 motions built from two word lists,
 * one in eight held out by its text (no reference answer: the rule judge's scores decide).
 */
export function syntheticDebateTasks(options: SyntheticDebateOptions): { train: DebateTask[]; test: DebateTask[] } {
  if (options.kind === 'math') {
    const source = new ArithmeticTaskSource({
      seed: options.seed,
      levels: options.levels,
      trainSize: options.trainSize,
      testSize: options.testSize,
    });
    const asDebate = (task: { id: string; question: string; answer: string }, split: 'train' | 'test'): DebateTask => ({
      id: task.id,
      dataSource: MATH_DEBATE_SOURCE,
      question: task.question,
      answer: task.answer,
      split,
    });
    return {
      train: Array.from({ length: options.trainSize }, (_, i) => asDebate(source.train(i), 'train')),
      test: source.test().map((task) => asDebate(task, 'test')),
    };
  }
  const motion = (question: string, i: number, split: 'train' | 'test'): DebateTask => ({
    id: `motion-${i}`,
    dataSource: MOTION_SOURCE,
    question,
    split,
  });
  const all = syntheticMotions().map((question, i) => ({ question, i }));
  return {
    train: all.filter((m) => !isHeldOutMotion(m.question)).map((m) => motion(m.question, m.i, 'train')),
    test: all
      .filter((m) => isHeldOutMotion(m.question))
      .slice(0, options.testSize)
      .map((m) => motion(m.question, m.i, 'test')),
  };
}
