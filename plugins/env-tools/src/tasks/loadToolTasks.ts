import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { DrmasError, z } from '@drmas/core';
import { hashParts } from '@drmas/plugin-env-math';
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

/** The file's records, each with where it sits (a JSONL line, 1-based, or an array index, 0-based). */
function records(content: string, file: string): { value: unknown; where: string; index: number }[] {
  if (/\.(jsonl|ndjson)$/i.test(file)) {
    return content
      .split(/\r?\n/)
      .map((line, k) => ({ line, k }))
      .filter(({ line }) => line.trim() !== '')
      .map(({ line, k }) => {
        try {
          return { value: JSON.parse(line) as unknown, where: `line ${k + 1}`, index: k + 1 };
        } catch (cause) {
          throw new DrmasError('DATASET_INVALID', `line ${k + 1}: invalid JSON (${(cause as Error).message})`, {
            file,
            hint: 'a JSONL file holds one JSON object per line',
          });
        }
      });
  }
  let document: unknown;
  try {
    document = JSON.parse(content);
  } catch (cause) {
    throw new DrmasError('DATASET_INVALID', `invalid JSON (${(cause as Error).message})`, {
      file,
      hint: 'fix the JSON, or name the file .jsonl if it holds one record per line',
    });
  }
  if (!Array.isArray(document)) throw new DrmasError('DATASET_INVALID', 'expected a JSON array of records', { file });
  return (document as unknown[]).map((value, k) => ({ value, where: `record ${k}`, index: k }));
}

/**
 * Tool tasks from a JSON array or a JSONL file: `{"question": ..., "answer": ..., "files": {path: text}, "split":
 * "train"|"test", "data_source": ...}`. Every problem is a DATASET_INVALID naming the file, the line or record, and
 * the field.
 */
export async function loadToolTasks(file: string): Promise<(ToolTask & { split?: 'train' | 'test' })[]> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (cause) {
    throw new DrmasError('DATASET_INVALID', `cannot read the tasks (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`, {
      file,
      hint: 'check the path; relative paths resolve from the config file',
      cause,
    });
  }
  const source = basename(file, extname(file));
  const tasks = records(content.replace(/^\uFEFF/, ''), file).map(({ value, where, index }) => {
    const parsed = toolRecord.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DrmasError('DATASET_INVALID', `${where}: ${issue.path.join('.') || 'record'}: ${issue.message}`, {
        file,
        key: issue.path.join('.') || undefined,
        hint: 'a record is {"question": "...", "answer": "...", "files"?: {"/path": "text"}, "split"?: "train"|"test"} (see the env-tools README)',
      });
    }
    const r = parsed.data;
    return {
      id: r.id ?? `${source}-${index}`,
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
