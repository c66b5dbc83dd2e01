import { EpochSchedule } from '@drmas/plugin-env-math';
import type { EnvTaskBatch } from '@drmas/core';
import type { DebateTask } from './DebateTask.js';

/** A finite training pool cycled in epochs (each its own shuffle of (seed, epoch), so a saved cursor resumes exactly) and a held-out list. */
export class DebateTaskPool {
  private readonly schedule: EpochSchedule;

  constructor(
    private readonly trainTasks: readonly DebateTask[],
    private readonly testTasks: readonly DebateTask[],
    seed: number,
  ) {
    this.schedule = new EpochSchedule(trainTasks.length, seed, 'debate-train');
  }

  batch(cursor: number, count: number): EnvTaskBatch<DebateTask> {
    const tasks = Array.from({ length: count }, (_, i) => ({ ...this.trainTasks[this.schedule.indexAt(cursor + i)]! }));
    return { tasks, nextCursor: cursor + count };
  }

  test(): DebateTask[] {
    return this.testTasks.map((task) => ({ ...task }));
  }
}
