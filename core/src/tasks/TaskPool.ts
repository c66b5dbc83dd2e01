import type { EnvTask, EnvTaskBatch } from '../services/Environment.js';
import { EpochSchedule } from './EpochSchedule.js';

/**
 * A finite training pool cycled in epochs (each epoch its own shuffle of (seed, label, epoch), so a saved cursor
 * resumes exactly) and a held-out list; what an environment with a fixed task set serves from `batch` and `test`.
 * The caller keeps the two lists apart. Every task handed out is a copy.
 */
export class TaskPool<T extends EnvTask> {
  private readonly schedule: EpochSchedule;

  /** `label` names the pool's shuffles (`code-train`), so two pools of one seed draw different orders. */
  constructor(
    private readonly trainTasks: readonly T[],
    private readonly testTasks: readonly T[],
    seed: number,
    label: string,
  ) {
    this.schedule = new EpochSchedule(trainTasks.length, seed, label);
  }

  get trainSize(): number {
    return this.trainTasks.length;
  }

  /** `count` training tasks from `cursor` on; the same cursor gives the same tasks. */
  batch(cursor: number, count: number): EnvTaskBatch<T> {
    const tasks: T[] = [];
    for (let c = cursor; c < cursor + count; c++) tasks.push({ ...this.trainTasks[this.schedule.indexAt(c)]! });
    return { tasks, nextCursor: cursor + count };
  }

  test(): T[] {
    return this.testTasks.map((task) => ({ ...task }));
  }
}
