import { createToken } from '../di/Token.js';

/** One question, with its reference answer when it has one. */
export interface Question {
  id: string;
  question: string;
  answer?: string;
}

/** What a question set is asked for; every list is a pure function of it. */
export interface QuestionRequest {
  seed: number;
  /** Training questions wanted (a set of fixed size gives all it has). */
  trainSize: number;
  /** Held-out questions at most. */
  testSize: number;
  /** Difficulty levels, for a set that grades its questions (env-math's arithmetic levels 1 to 5). */
  levels?: readonly number[];
}

/**
 * Questions an environment takes its tasks from, made by the plugin that knows them: env-math's `math` (arithmetic
 * with answers), env-debate's `motions` (none). env-debate's `env.debate.tasks` names one.
 */
export interface QuestionSet {
  /** A training list and a held-out list; no question is in both. */
  questions(request: QuestionRequest): { train: Question[]; test: Question[] };
}

export const QuestionSet = createToken<QuestionSet>('QuestionSet', { label: 'question set', named: true });
