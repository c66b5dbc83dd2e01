import { mathAnswersEqual } from './answerEquivalence.js';
import { columnWork } from './columnArithmetic.js';
import { isArithmeticTask, type MathTask } from './MathTask.js';
import { VERIFY_APPROVE, VERIFY_REJECT } from './verifierVerdict.js';

export interface DemonstrationStyle {
  /**
   * `steps` (default): one `expression=value.` per operation, e.g. `12-5=7. 7+8=15.`; `columns`: multi-digit sums
   * and differences worked column by column (`columnWork`), e.g. `27+25` as `7+5=12, 2+2+1=5; 27+25=52.`
   */
  method?: 'steps' | 'columns';
}

/** The worked steps of a synthetic task; empty for tasks without steps (loaded datasets). */
function workedSteps(task: MathTask, style: DemonstrationStyle): string {
  if (!isArithmeticTask(task)) return '';
  const render = (step: readonly string[]) =>
    (style.method === 'columns' && step.length === 2 ? columnWork(step[0]!, step[1]!) : undefined) ?? step.join('=');
  return task.steps.map((step) => `${render(step)}.`).join(' ');
}

/**
 * A short Solver solution for supervised warm-up: the worked steps of a synthetic task, then `\boxed{answer}`,
 * e.g. `12-5=7. 7+8=15. \boxed{15}`. Tasks without steps get the boxed answer alone.
 */
export function solverDemonstration(task: MathTask, style: DemonstrationStyle = {}): string {
  const steps = workedSteps(task, style);
  return `${steps ? `${steps} ` : ''}\\boxed{${task.answer}}`;
}

/**
 * A short Verifier response judging `proposedAnswer` (undefined: the Solver gave none): the worked steps, the
 * judgement, then `<verify>approve</verify>` when it equals the reference answer and `<verify>reject</verify>`
 * otherwise, e.g. `12-5=7. 7+8=15. 14 is wrong. <verify>reject</verify>`.
 */
export function verifierDemonstration(task: MathTask, proposedAnswer: string | undefined, style: DemonstrationStyle = {}): string {
  const steps = workedSteps(task, style);
  const prefix = steps ? `${steps} ` : '';
  if (proposedAnswer === undefined || proposedAnswer.trim() === '') return `${prefix}No answer. ${VERIFY_REJECT}`;
  const correct = mathAnswersEqual(proposedAnswer, task.answer);
  return `${prefix}${proposedAnswer.trim()} is ${correct ? 'right' : 'wrong'}. ${correct ? VERIFY_APPROVE : VERIFY_REJECT}`;
}
