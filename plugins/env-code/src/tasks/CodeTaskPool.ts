import { EpochSchedule } from '@drmas/plugin-env-math';
import type { CodeTask, CodeTaskSource } from './CodeTask.js';

/**
 * A finite training pool cycled in epochs (each epoch its own shuffle of (seed, epoch), so a saved cursor resumes
 * exactly) and a held-out list. The caller keeps the two apart.
 */
export class CodeTaskPool implements CodeTaskSource {
  private readonly schedule: EpochSchedule;

  constructor(
    private readonly trainTasks: readonly CodeTask[],
    private readonly testTasks: readonly CodeTask[],
    seed: number,
  ) {
    this.schedule = new EpochSchedule(trainTasks.length, seed, 'code-train');
  }

  get trainSize(): number {
    return this.trainTasks.length;
  }

  batch(cursor: number, count: number): { tasks: CodeTask[]; nextCursor: number } {
    const tasks: CodeTask[] = [];
    for (let c = cursor; c < cursor + count; c++) tasks.push({ ...this.trainTasks[this.schedule.indexAt(c)]! });
    return { tasks, nextCursor: cursor + count };
  }

  test(): CodeTask[] {
    return this.testTasks.map((task) => ({ ...task }));
  }
}
