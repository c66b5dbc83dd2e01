import { basename, extname } from 'node:path';
import { extractBoxedAnswer, firstRecordText, QUESTION_FIELDS, readTaskRecords, recordText, type TaskRecordPlace } from '@drmas/core';
import { MathDatasetError } from './errors.js';
import type { MathSplit, MathTask } from './MathTask.js';

export interface LoadMathDatasetOptions {
  /** Overrides each record's `data_source`/`source`; default: the record's, else the file name without extension. */
  dataSource?: string;
  /** Overrides each record's `split`; default: the record's `split` when it is `train` or `test`, else `train`. */
  split?: MathSplit;
}

const RECORD_SHAPE =
  'each record needs "question" (or "query", "problem", "extra_info.question") and "answer" (or "ground_truth", "target", "reward_model.ground_truth", "extra_info.answer", or a "solution" ending in \\boxed{...})';

function fail(place: TaskRecordPlace, problem: string, field?: string, hint = RECORD_SHAPE): never {
  throw new MathDatasetError(problem, { ...place, field, hint });
}

/** The first of `keys` the record has as text (UnityMAS-O's field fallbacks). */
function firstField(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  return firstRecordText(record, keys)?.text;
}

const QUESTION_KEYS = QUESTION_FIELDS;
const ANSWER_KEYS = ['answer', 'ground_truth', 'target', 'reward_model.ground_truth', 'extra_info.answer'];

/**
 * The reference answer: the first of `answer`, `ground_truth`, `target`, `reward_model.ground_truth`,
 * `extra_info.answer` (a GSM8K `#### 42` tail or a `\boxed{}` is unwrapped), else the last box of `solution`.
 */
function readAnswer(record: Record<string, unknown>, place: TaskRecordPlace): string {
  const answer = firstField(record, ANSWER_KEYS);
  if (answer !== undefined) {
    const gsm8k = answer.lastIndexOf('####');
    if (gsm8k >= 0) return answer.slice(gsm8k + 4).trim();
    return (/\\(?:boxed|fbox)/.test(answer) ? extractBoxedAnswer(answer) : undefined) ?? answer.trim();
  }
  const solution = recordText(record, 'solution');
  if (solution === undefined) fail(place, `missing "answer" (or ${ANSWER_KEYS.slice(1).join(', ')}, "solution")`, 'answer');
  const boxed = extractBoxedAnswer(solution);
  if (boxed === undefined || boxed === '')
    fail(
      place,
      '"solution" has no complete \\boxed{...} answer',
      'solution',
      'add an "answer" field to this record, or end its solution with \\boxed{answer}',
    );
  return boxed;
}

function readDifficulty(record: Record<string, unknown>): number | undefined {
  for (const key of ['level', 'difficulty']) {
    const value = record[key];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string') {
      const m = /-?\d+(?:\.\d+)?/.exec(value);
      if (m) return Number(m[0]);
    }
  }
  return undefined;
}

function recordToTask(
  raw: unknown,
  place: TaskRecordPlace,
  options: LoadMathDatasetOptions,
  defaults: { source: string; id: string },
): MathTask {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail(place, `record is ${Array.isArray(raw) ? 'an array' : JSON.stringify(raw)}, not a JSON object`);
  const record = raw as Record<string, unknown>;
  const question = firstField(record, QUESTION_KEYS);
  if (question === undefined) fail(place, `missing "question" (or ${QUESTION_KEYS.slice(1).join(', ')})`, 'question');
  const answer = readAnswer(record, place);
  const recordSplit = record.split === 'train' || record.split === 'test' ? record.split : undefined;
  const task: MathTask = {
    id: recordText(record, 'id') ?? recordText(record, 'unique_id') ?? defaults.id,
    question,
    answer,
    dataSource: options.dataSource ?? recordText(record, 'data_source') ?? recordText(record, 'source') ?? defaults.source,
    split: options.split ?? recordSplit ?? 'train',
  };
  const difficulty = readDifficulty(record);
  if (difficulty !== undefined) task.difficulty = difficulty;
  return task;
}

/**
 * Reads math tasks from a Parquet file (`.parquet`), a JSONL file (one record per line; `.jsonl`/`.ndjson`) or a JSON file (an array of records,
 * or `{"data": [...]}`); other extensions are detected from the content. A record has its question in `question`,
 * `query`, `problem` or `extra_info.question`, its answer in `answer`, `ground_truth`, `target`,
 * `reward_model.ground_truth` or `extra_info.answer` (or a `solution` whose last `\boxed{}` is the answer; UnityMAS-O's
 * fallbacks, verl's Parquet layout included), and optionally `id`/`unique_id`,
 * `data_source`/`source`, `level`/`difficulty` (a number or e.g. "Level 3") and `split`.
 * Throws `MathDatasetError` naming the file, line (JSONL) or record index (JSON) and key at fault, and for an empty file.
 */
export async function loadMathDataset(file: string, options: LoadMathDatasetOptions = {}): Promise<MathTask[]> {
  const source = basename(file, extname(file));
  const records = await readTaskRecords(
    file,
    (problem, { place, field, hint, cause }) => new MathDatasetError(problem, { ...place, field, hint, cause }),
  );
  const tasks = records.map(({ value, place }) =>
    recordToTask(value, place, options, { source, id: `${source}-${place.line ?? place.record}` }),
  );
  if (tasks.length === 0)
    throw new MathDatasetError('the dataset contains no records', {
      file,
      hint: `add at least one record; ${RECORD_SHAPE}`,
    });
  return tasks;
}
