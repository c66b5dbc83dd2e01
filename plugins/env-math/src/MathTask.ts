export type MathSplit = 'train' | 'test';

/** One math problem with its reference answer. */
export interface MathTask {
  id: string;
  question: string;
  /** Reference answer as it would appear inside `\boxed{}` (e.g. `15`, `3/4`, `\frac{\sqrt{3}}{2}`). */
  answer: string;
  dataSource: string;
  difficulty?: number;
  split: MathSplit;
}

/**
 * One line of a worked solution: forms of the same value, left to right, the last being the value itself,
 * e.g. `['1/2+1/3', '3/6+2/6', '5/6']` reads `1/2+1/3=3/6+2/6=5/6.`
 */
export type SolutionStep = readonly string[];

/** A synthetic task that keeps the steps of its solution, so a demonstration can be written from them. */
export interface ArithmeticTask extends MathTask {
  difficulty: number;
  steps: readonly SolutionStep[];
}

export interface TaskBatch {
  tasks: MathTask[];
  /** The cursor to pass to the next `batch` call; save it to resume a run exactly. */
  nextCursor: number;
}

/** What a training loop needs from a source of math tasks. */
export interface MathTaskSource {
  train(index: number): MathTask;
  /** The fixed held-out list; never shares a question with `train`. */
  test(): MathTask[];
  batch(cursor: number, count: number): TaskBatch;
}

export function isArithmeticTask(task: MathTask): task is ArithmeticTask {
  return Array.isArray((task as Partial<ArithmeticTask>).steps);
}
