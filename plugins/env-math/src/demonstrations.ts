import { mathAnswersEqual } from './answerEquivalence.js';
import { isArithmeticTask, type MathTask } from './MathTask.js';
import { VERIFY_APPROVE, VERIFY_REJECT } from './verifierVerdict.js';

/** `12-5=7. 7+8=15.` from a synthetic task's steps; empty for tasks without steps (loaded datasets). */
function workedSteps(task: MathTask): string {
  if (!isArithmeticTask(task)) return '';
  return task.steps.map((step) => `${step.join('=')}.`).join(' ');
}

/**
 * A short Solver solution for supervised warm-up: the worked steps of a synthetic task, then `\boxed{answer}`,
 * e.g. `12-5=7. 7+8=15. \boxed{15}`. Tasks without steps get the boxed answer alone.
 */
export function solverDemonstration(task: MathTask): string {
  const steps = workedSteps(task);
  return `${steps ? `${steps} ` : ''}\\boxed{${task.answer}}`;
}

/**
 * A short Verifier response judging `proposedAnswer` (undefined: the Solver gave none): the worked steps, the
 * judgement, then `<verify>approve</verify>` when it equals the reference answer and `<verify>reject</verify>`
 * otherwise, e.g. `12-5=7. 7+8=15. 14 is wrong. <verify>reject</verify>`.
 */
export function verifierDemonstration(task: MathTask, proposedAnswer: string | undefined): string {
  const steps = workedSteps(task);
  const prefix = steps ? `${steps} ` : '';
  if (proposedAnswer === undefined || proposedAnswer.trim() === '') return `${prefix}No answer. ${VERIFY_REJECT}`;
  const correct = mathAnswersEqual(proposedAnswer, task.answer);
  return `${prefix}${proposedAnswer.trim()} is ${correct ? 'right' : 'wrong'}. ${correct ? VERIFY_APPROVE : VERIFY_REJECT}`;
}
