import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { DrmasError } from '@drmas/core';
import { hashParts } from '@drmas/plugin-env-math';
import type { DebateTask } from './DebateTask.js';

const RECORD_SHAPE =
  'a record is an object with "question" (or "motion", "topic"), optionally "answer" (the reference of a verifiable debate) and "split" ("train" or "test")';

/** A record's place for messages: a JSONL line (1-based) or a JSON array position (0-based). */
type Place = { line: number } | { record: number };

function where(place: Place): string {
  return 'line' in place ? `line ${place.line}` : `record ${place.record}`;
}

/** The dataset's records with their places: a `.jsonl`/`.ndjson` file holds one per line, a JSON file an array (or `{"data": [...]}`). */
function records(content: string, file: string): Array<{ value: unknown; place: Place }> {
  const parse = (text: string, place?: Place): unknown => {
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new DrmasError('DATASET_INVALID', `${place ? `${where(place)}: ` : ''}invalid JSON (${(cause as Error).message})`, {
        file,
        hint: place
          ? 'a JSONL file holds one JSON object per line'
          : 'fix the JSON, or name the file .jsonl if it holds one record per line',
      });
    }
  };
  if (/\.(jsonl|ndjson)$/i.test(file)) {
    return content
      .split(/\r?\n/)
      .map((text, k) => ({ text, place: { line: k + 1 } }))
      .filter(({ text }) => text.trim() !== '')
      .map(({ text, place }) => ({ value: parse(text, place), place }));
  }
  const document = parse(content);
  const list: unknown = Array.isArray(document) ? document : (document as { data?: unknown } | null)?.data;
  if (!Array.isArray(list))
    throw new DrmasError('DATASET_INVALID', 'expected a JSON array of records or {"data": [...]}', { file, hint: RECORD_SHAPE });
  return (list as unknown[]).map((value, k) => ({ value, place: { record: k } }));
}

function field(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

/**
 * Debate tasks from a JSON or JSONL file; every bad record is a DATASET_INVALID naming the file, the line or record
 * and the field. `dataSource` defaults to the file name without its extension.
 */
export async function loadDebateDataset(file: string, dataSource?: string): Promise<DebateTask[]> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (cause) {
    throw new DrmasError('DATASET_INVALID', `cannot read the dataset (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`, {
      file,
      hint: 'check the path; relative paths resolve from the config file',
      cause,
    });
  }
  const source = dataSource ?? basename(file, extname(file));
  const tasks = records(content.replace(/^\uFEFF/, ''), file).map(({ value, place }, k): DebateTask => {
    const fail = (problem: string, key?: string): never => {
      throw new DrmasError('DATASET_INVALID', `${where(place)}: ${problem}`, { file, key, hint: RECORD_SHAPE });
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
