import { basename, extname } from 'node:path';
import { DrmasError, datasetInvalid, hashParts, readTaskRecords, recordPlaceText, z } from '@drmas/core';
import type { ToolTask } from './ToolTask.js';

/** One record of a tool-task dataset. */
const toolRecord = z.strictObject({
  id: z.string().min(1).optional(),
  question: z.string().min(1),
  answer: z.union([z.string().min(1), z.number().transform(String)]),
  /** Files (path to text) the episode's filesystem starts with. */
  files: z.record(z.string(), z.string()).optional(),
  split: z.enum(['train', 'test']).optional(),
  data_source: z.string().min(1).optional(),
});

export type ToolRecord = z.input<typeof toolRecord>;

/**
 * Tool tasks from a JSON array, a JSONL or a Parquet file (core's `readTaskRecords`): `{"question": ..., "answer": ..., "files": {path: text}, "split":
 * "train"|"test", "data_source": ...}`. Every problem is a DATASET_INVALID naming the file, the line or record, and
 * the field.
 */
export async function loadToolTasks(file: string): Promise<(ToolTask & { split?: 'train' | 'test' })[]> {
  const source = basename(file, extname(file));
  const tasks = (await readTaskRecords(file, datasetInvalid)).map(({ value, place }) => {
    const parsed = toolRecord.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DrmasError('DATASET_INVALID', `${recordPlaceText(place)}: ${issue.path.join('.') || 'record'}: ${issue.message}`, {
        file,
        key: issue.path.join('.') || undefined,
        hint: 'a record is {"question": "...", "answer": "...", "files"?: {"/path": "text"}, "split"?: "train"|"test"} (see the env-tools README)',
      });
    }
    const r = parsed.data;
    return {
      id: r.id ?? `${source}-${place.line ?? place.record}`,
      dataSource: r.data_source ?? source,
      question: r.question,
      answer: r.answer,
      ...(r.files ? { files: r.files } : {}),
      ...(r.split ? { split: r.split } : {}),
    };
  });
  if (tasks.length === 0) throw new DrmasError('DATASET_INVALID', 'the file holds no task', { file });
  return tasks;
}

/** The held-out side: `testFraction` of the tasks by a hash of the question, else the records marked `"split": "test"`. */
export function splitToolTasks(
  tasks: readonly (ToolTask & { split?: string })[],
  testFraction: number | undefined,
): { train: ToolTask[]; test: ToolTask[] } {
  const held = (task: ToolTask & { split?: string }) =>
    testFraction !== undefined
      ? hashParts('drmas/env-tools/dataset-held-out', task.question.trim()) / 4294967296 < testFraction
      : task.split === 'test';
  return { train: tasks.filter((t) => !held(t)), test: tasks.filter(held) };
}
