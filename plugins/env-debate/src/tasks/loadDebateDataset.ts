import { basename, extname } from 'node:path';
import { DrmasError, datasetInvalid, hashParts, readTaskRecords, recordPlaceText } from '@drmas/core';
import type { DebateTask } from './DebateTask.js';

const RECORD_SHAPE =
  'a record is an object with "question" (or "motion", "topic"), optionally "answer" (the reference of a verifiable debate) and "split" ("train" or "test")';

function field(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

/**
 * Debate tasks from a JSON, JSONL or Parquet file (core's `readTaskRecords`); every bad record is a DATASET_INVALID naming the file, the line or record
 * and the field. `dataSource` defaults to the file name without its extension.
 */
export async function loadDebateDataset(file: string, dataSource?: string): Promise<DebateTask[]> {
  const source = dataSource ?? basename(file, extname(file));
  const tasks = (await readTaskRecords(file, datasetInvalid)).map(({ value, place }, k): DebateTask => {
    const fail = (problem: string, key?: string): never => {
      throw new DrmasError('DATASET_INVALID', `${recordPlaceText(place)}: ${problem}`, { file, key, hint: RECORD_SHAPE });
    };
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('a record must be a JSON object');
    const record = value as Record<string, unknown>;
    const question = field(record, ['question', 'motion', 'topic']) ?? fail('no "question" (or "motion", "topic")', 'question');
    const split = record.split ?? 'train';
    if (split !== 'train' && split !== 'test') return fail(`"split" must be "train" or "test", got ${JSON.stringify(split)}`, 'split');
    const answer = field(record, ['answer']);
    if (record.answer !== undefined && answer === undefined) return fail('"answer" must be a non-empty string or a number', 'answer');
    return {
      id: field(record, ['id']) ?? `${source}-${k}`,
      dataSource: source,
      question,
      split,
      ...(answer !== undefined ? { answer } : {}),
    };
  });
  if (tasks.length === 0) throw new DrmasError('DATASET_INVALID', 'the dataset contains no records', { file, hint: RECORD_SHAPE });
  return tasks;
}

/** The held-out side: `testFraction` by a hash of the question (stable under reordering), else the records marked `split: test`. */
export function splitDebateTasks(
  tasks: readonly DebateTask[],
  testFraction: number | undefined,
): { train: DebateTask[]; test: DebateTask[] } {
  const held = (task: DebateTask) =>
    testFraction !== undefined ? hashParts('drmas/env-debate/held-out', task.question) / 4294967296 < testFraction : task.split === 'test';
  return {
    train: tasks.filter((t) => !held(t)).map((t) => ({ ...t, split: 'train' as const })),
    test: tasks.filter(held).map((t) => ({ ...t, split: 'test' as const })),
  };
}
