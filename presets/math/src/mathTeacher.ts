import { extractBoxedAnswer, hashParts } from '@drmas/core';
import {
  mathAnswersEqual,
  solverDemonstration,
  verifierDemonstration,
  type DemonstrationStyle,
  type MathTask,
} from '@drmas/plugin-env-math';
import type { TeacherPolicy } from '@drmas/plugin-orchestra';

/** A plausible wrong answer near the right one, for demonstrations the Verifier learns to reject (and a debater to correct). */
export function wrongAnswer(answer: string, salt: number): string {
  const fraction = /^(-?\d+)\/(\d+)$/.exec(answer);
  const offset = 1 + (salt % 3);
  if (fraction) return `${Number(fraction[1]) + offset}/${fraction[2]}`;
  const value = Number(answer);
  return Number.isFinite(value) ? String(value + (salt % 2 ? offset : -offset)) : `${answer}0`;
}

/**
 * The math teacher: the Solver writes the worked steps and `\boxed{answer}` (a wrong final answer on a share
 * `wrongRate` of first attempts, so the Verifier sees both kinds), the Verifier checks the Solver's latest answer.
 * `tasks` maps each question to its task.
 */
export function mathTeacher(
  tasks: ReadonlyMap<string, MathTask>,
  options: { wrongRate?: number } & DemonstrationStyle = {},
): TeacherPolicy {
  const wrongRate = options.wrongRate ?? 0.3;
  const style: DemonstrationStyle = { method: options.method ?? 'columns' };
  return (prompt) => {
    const question = /(?:Solve|Check): (.*)\n/.exec(prompt)?.[1]?.trim() ?? '';
    const task = tasks.get(question);
    if (!task) return 'I cannot read the problem.';
    const solverTurns = [...prompt.matchAll(/The output of "solver": ([^\n]*)/g)].map((m) => m[1]);
    if (prompt.includes('Check: ')) {
      return verifierDemonstration(task, extractBoxedAnswer(solverTurns.at(-1) ?? ''), style);
    }
    const correct = solverDemonstration(task, style);
    const salt = hashParts(question, String(solverTurns.length));
    if (solverTurns.length === 0 && (salt % 1000) / 1000 < wrongRate) {
      const wrong = wrongAnswer(task.answer, salt);
      if (!mathAnswersEqual(wrong, task.answer)) return correct.replace(/\\boxed\{[^{}]*\}$/, `\\boxed{${wrong}}`);
    }
    return correct;
  };
}
