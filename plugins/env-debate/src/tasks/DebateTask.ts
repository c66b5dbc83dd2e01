import type { EnvTask } from '@drmas/core';

/** One debate: a question (or motion), and the reference answer when the question has one (a verifiable debate). */
export interface DebateTask extends EnvTask {
  question: string;
  /** What a debater's final answer must equal (by `env.debate.answerFormat`) to be right; absent for motions. */
  answer?: string;
  split: 'train' | 'test';
}
