import { mathAnswersEqual } from './answerEquivalence.js';
import { extractBoxedAnswer, hasBoxCommand } from '@drmas/core';

export type MathScoreReason = 'correct' | 'wrong' | 'no_boxed' | 'truncated';

export interface MathScore {
  correct: boolean;
  extracted?: string;
  reason: MathScoreReason;
}

/**
 * Scores a model response against the reference answer. `truncated`: the last box never closes, or a `<think>`
 * block never ends; `no_boxed`: no box in the final answer section (after the last `</think>`).
 */
export function scoreMathResponse(text: string, truth: string): MathScore {
  const response = typeof text === 'string' ? text : '';
  const extracted = extractBoxedAnswer(response);
  if (extracted === undefined) {
    const truncated = hasBoxCommand(response) || (response.includes('<think>') && !response.includes('</think>'));
    return { correct: false, reason: truncated ? 'truncated' : 'no_boxed' };
  }
  const correct = mathAnswersEqual(extracted, truth);
  return { correct, extracted, reason: correct ? 'correct' : 'wrong' };
}
