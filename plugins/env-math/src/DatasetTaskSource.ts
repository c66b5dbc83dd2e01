import { EpochSchedule, hashFraction } from '@drmas/core';
import { MathTaskSourceError } from './errors.js';
import { loadMathDataset } from './loadMathDataset.js';
import type { MathTask, MathTaskSource, TaskBatch } from './MathTask.js';

export interface DatasetTaskSourceOptions {
  tasks: MathTask[];
  /** A separate held-out list; training drops any task whose question appears in it. */
  testTasks?: MathTask[];
  /**
   * Hold out this share of the questions, chosen by a hash of the question text (not the seed), so copies of a
   * question always land on the same side. Without `testTasks` or `testFraction`, tasks whose `split` is `test`
   * are held out.
   */
  testFraction?: number;
  /** Seeds the per-epoch shuffles of `batch`. Default 0. */
  seed?: number;
}

export interface DatasetTaskSourceFileOptions {
  file: string;
  testFile?: string;
  testFraction?: number;
  seed?: number;
  dataSource?: string;
}

/** Questions compared for the split: whitespace runs collapsed. */
function questionKey(question: string): string {
  return question.trim().replace(/\s+/g, ' ');
}

/** Tasks from a loaded dataset, with a held-out split and resumable, per-epoch shuffled batches. */
export class DatasetTaskSource implements MathTaskSource {
  readonly seed: number;
  private readonly trainTasks: MathTask[];
  private readonly testTasks: MathTask[];
  private readonly schedule: EpochSchedule;

  constructor(options: DatasetTaskSourceOptions) {
    const { tasks, testTasks, testFraction, seed = 0 } = options;
    if (!Array.isArray(tasks) || tasks.length === 0)
      throw new MathTaskSourceError('tasks must be a non-empty array; load them with loadMathDataset', 'tasks');
    if (testTasks !== undefined && testFraction !== undefined)
      throw new MathTaskSourceError('give either testTasks or testFraction, not both', 'testFraction');
    if (testFraction !== undefined && !(testFraction >= 0 && testFraction < 1))
      throw new MathTaskSourceError(`testFraction must be in [0, 1), got ${testFraction}`, 'testFraction');
    if (!Number.isFinite(seed)) throw new MathTaskSourceError(`seed must be a finite number, got ${seed}`, 'seed');
    this.seed = seed;

    let held: (task: MathTask) => boolean;
    let test: MathTask[];
    if (testTasks !== undefined) {
      const keys = new Set(testTasks.map((t) => questionKey(t.question)));
      held = (task) => keys.has(questionKey(task.question));
      test = testTasks;
    } else if (testFraction !== undefined) {
      held = (task) => hashFraction('drmas/env-math/dataset-held-out', questionKey(task.question)) < testFraction;
      test = tasks.filter(held);
    } else {
      const keys = new Set(tasks.filter((t) => t.split === 'test').map((t) => questionKey(t.question)));
      held = (task) => keys.has(questionKey(task.question));
      test = tasks.filter((t) => t.split === 'test');
    }
    this.testTasks = test.map((t) => ({ ...t, split: 'test' }));
    this.trainTasks = tasks.filter((t) => !held(t)).map((t) => ({ ...t, split: 'train' }));
    if (this.trainTasks.length === 0)
      throw new MathTaskSourceError(
        `all ${tasks.length} tasks are held out, none is left for training; lower testFraction or use a different test file`,
        'testFraction',
      );
    this.schedule = new EpochSchedule(this.trainTasks.length, seed, 'dataset-train');
  }

  /** Loads `file` (and `testFile`, whose tasks become the held-out split) with `loadMathDataset`. */
  static async fromFiles(options: DatasetTaskSourceFileOptions): Promise<DatasetTaskSource> {
    const { file, testFile, testFraction, seed, dataSource } = options;
    const tasks = await loadMathDataset(file, { dataSource, split: testFile ? 'train' : undefined });
    const testTasks = testFile ? await loadMathDataset(testFile, { dataSource, split: 'test' }) : undefined;
    return new DatasetTaskSource({ tasks, testTasks, testFraction, seed });
  }

  get trainSize(): number {
    return this.trainTasks.length;
  }

  train(index: number): MathTask {
    if (!(Number.isInteger(index) && index >= 0 && index < this.trainTasks.length))
      throw new MathTaskSourceError(
        `train index ${index} is outside 0..${this.trainTasks.length - 1}; use batch(cursor, count) to cycle through epochs`,
        'index',
      );
    return { ...this.trainTasks[index]! };
  }

  test(): MathTask[] {
    return this.testTasks.map((t) => ({ ...t }));
  }

  /** `count` tasks from `cursor`: position cursor % trainSize of epoch floor(cursor / trainSize), shuffled per epoch. */
  batch(cursor: number, count: number): TaskBatch {
    for (const [name, value] of [
      ['cursor', cursor],
      ['count', count],
    ] as const)
      if (!(Number.isInteger(value) && value >= 0))
        throw new MathTaskSourceError(`${name} must be a non-negative integer, got ${value}`, name);
    const tasks: MathTask[] = [];
    for (let c = cursor; c < cursor + count; c++) tasks.push(this.train(this.schedule.indexAt(c)));
    return { tasks, nextCursor: cursor + count };
  }
}
