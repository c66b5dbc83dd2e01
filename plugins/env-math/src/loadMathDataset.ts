import { readFile } from 'node:fs/promises';
import { parquetReadObjects } from 'hyparquet';
import { basename, extname } from 'node:path';
import { extractBoxedAnswer } from './boxedAnswer.js';
import { MathDatasetError } from './errors.js';
import type { MathSplit, MathTask } from './MathTask.js';

export interface LoadMathDatasetOptions {
  /** Overrides each record's `data_source`/`source`; default: the record's, else the file name without extension. */
  dataSource?: string;
  /** Overrides each record's `split`; default: the record's `split` when it is `train` or `test`, else `train`. */
  split?: MathSplit;
}

/** Where a record sits: a JSONL line or a JSON array position. */
interface RecordPlace {
  file: string;
  line?: number;
  record?: number;
}

const RECORD_SHAPE =
  'each record needs "question" (or "query", "problem", "extra_info.question") and "answer" (or "ground_truth", "target", "reward_model.ground_truth", "extra_info.answer", or a "solution" ending in \\boxed{...})';

function fail(place: RecordPlace, problem: string, field?: string, hint = RECORD_SHAPE): never {
  throw new MathDatasetError(problem, { ...place, field, hint });
}

/** A text field, `a.b` naming a key of a nested object (Parquet structs, verl's `reward_model.ground_truth`). */
function textField(record: Record<string, unknown>, key: string): string | undefined {
  let value: unknown = record;
  for (const part of key.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return String(value);
  return undefined;
}

/** The first of `keys` the record has as text (UnityMAS-O's field fallbacks). */
function firstField(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = textField(record, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

const QUESTION_KEYS = ['question', 'query', 'problem', 'extra_info.question'];
const ANSWER_KEYS = ['answer', 'ground_truth', 'target', 'reward_model.ground_truth', 'extra_info.answer'];

/**
 * The reference answer: the first of `answer`, `ground_truth`, `target`, `reward_model.ground_truth`,
 * `extra_info.answer` (a GSM8K `#### 42` tail or a `\boxed{}` is unwrapped), else the last box of `solution`.
 */
function readAnswer(record: Record<string, unknown>, place: RecordPlace): string {
  const answer = firstField(record, ANSWER_KEYS);
  if (answer !== undefined) {
    const gsm8k = answer.lastIndexOf('####');
    if (gsm8k >= 0) return answer.slice(gsm8k + 4).trim();
    return (/\\(?:boxed|fbox)/.test(answer) ? extractBoxedAnswer(answer) : undefined) ?? answer.trim();
  }
  const solution = textField(record, 'solution');
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
  place: RecordPlace,
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
    id: textField(record, 'id') ?? textField(record, 'unique_id') ?? defaults.id,
    question,
    answer,
    dataSource: options.dataSource ?? textField(record, 'data_source') ?? textField(record, 'source') ?? defaults.source,
    split: options.split ?? recordSplit ?? 'train',
  };
  const difficulty = readDifficulty(record);
  if (difficulty !== undefined) task.difficulty = difficulty;
  return task;
}

function parseJsonLines(text: string, file: string, options: LoadMathDatasetOptions, source: string): MathTask[] {
  const tasks: MathTask[] = [];
  const lines = text.split(/\r?\n/);
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trim();
    if (line === '') continue;
    const place = { file, line: k + 1 };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new MathDatasetError(`invalid JSON (${(cause as Error).message})`, {
        ...place,
        hint: 'a JSONL file holds one JSON object per line; fix or remove this line',
        cause,
      });
    }
    tasks.push(recordToTask(value, place, options, { source, id: `${source}-${k + 1}` }));
  }
  return tasks;
}

function parseJsonDocument(value: unknown, file: string, options: LoadMathDatasetOptions, source: string): MathTask[] {
  const records = Array.isArray(value) ? value : value && typeof value === 'object' ? (value as { data?: unknown }).data : undefined;
  if (!Array.isArray(records))
    throw new MathDatasetError('expected a JSON array of records or an object with a "data" array', {
      file,
      field: 'data',
      hint: 'wrap the records as [{...}, ...] or {"data": [{...}, ...]}, or use one object per line in a .jsonl file',
    });
  return records.map((raw, k) => recordToTask(raw, { file, record: k }, options, { source, id: `${source}-${k}` }));
}

/** The rows of a Parquet file (hyparquet; snappy-compressed or uncompressed pages) as records. */
async function parseParquet(bytes: Buffer, file: string, options: LoadMathDatasetOptions, source: string): Promise<MathTask[]> {
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: new Uint8Array(bytes).buffer });
  } catch (cause) {
    throw new MathDatasetError(`cannot read the Parquet file (${(cause as Error).message})`, {
      file,
      hint: 'write it with snappy or no compression, or convert it to JSONL',
      cause,
    });
  }
  return rows.map((raw, k) => recordToTask(raw, { file, record: k }, options, { source, id: `${source}-${k}` }));
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
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (cause) {
    throw new MathDatasetError(`cannot read the dataset (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message})`, {
      file,
      hint: 'check the path; relative paths resolve from the working directory',
      cause,
    });
  }
  const extension = extname(file).toLowerCase();
  const source = basename(file, extname(file));
  let text = extension === '.parquet' ? '' : bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let tasks: MathTask[];
  if (extension === '.parquet') {
    tasks = await parseParquet(bytes, file, options, source);
  } else if (extension === '.jsonl' || extension === '.ndjson') {
    tasks = parseJsonLines(text, file, options, source);
  } else {
    let document: unknown;
    let parsed = false;
    try {
      document = JSON.parse(text);
      parsed = true;
    } catch (cause) {
      if (extension === '.json' && text.trim() !== '')
        throw new MathDatasetError(`invalid JSON (${(cause as Error).message})`, {
          file,
          hint: 'fix the JSON, or rename the file to .jsonl if it holds one JSON object per line',
          cause,
        });
    }
    // A lone object outside a .json file is a one-line JSONL file.
    const singleRecord =
      extension !== '.json' &&
      parsed &&
      document !== null &&
      typeof document === 'object' &&
      !Array.isArray(document) &&
      !('data' in document);
    tasks = parsed && !singleRecord ? parseJsonDocument(document, file, options, source) : parseJsonLines(text, file, options, source);
  }
  if (tasks.length === 0)
    throw new MathDatasetError('the dataset contains no records', {
      file,
      hint: `add at least one record; ${RECORD_SHAPE}`,
    });
  return tasks;
}
