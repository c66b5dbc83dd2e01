import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { DrmasError } from '../errors/DrmasError.js';

/** Where a task's question may be, in order (UnityMAS-O's fallbacks; verl's Parquet keeps it under `extra_info`). */
export const QUESTION_FIELDS: readonly string[] = ['question', 'query', 'problem', 'extra_info.question'];

/** Where a record sits in its file: a JSONL line (1-based), or a JSON array or Parquet row position (0-based). */
export interface TaskRecordPlace {
  file: string;
  line?: number;
  record?: number;
}

/** One record of a task file, as parsed (an object for a well-formed file; anything for a malformed JSON line). */
export interface TaskRecord {
  value: unknown;
  place: TaskRecordPlace;
}

/** A place as messages name it: `line 3` (JSONL), `record 2` (JSON array, Parquet), or '' (the whole file). */
export function recordPlaceText(place: TaskRecordPlace): string {
  return place.line !== undefined ? `line ${place.line}` : place.record !== undefined ? `record ${place.record}` : '';
}

/** Makes the caller's error (its class and code) for a file that cannot be read as records. */
export type TaskFileError = (problem: string, details: { place: TaskRecordPlace; field?: string; hint: string; cause?: unknown }) => Error;

/** A `TaskFileError` that is DATASET_INVALID naming the file, with the line or record before the problem. */
export const datasetInvalid: TaskFileError = (problem, { place, hint, cause }) => {
  const at = recordPlaceText(place);
  return new DrmasError('DATASET_INVALID', at ? `${at}: ${problem}` : problem, { file: place.file, hint, cause });
};

/**
 * DATASET_INVALID for a task file (at config `key`) whose records all went to the held-out split: nothing is left to
 * train on.
 */
export function noTrainingTaskLeft(file: string, key: string): DrmasError {
  return new DrmasError('DATASET_INVALID', `no training task is left in ${file} once the held-out tasks are set apart`, {
    file,
    key,
    hint: 'lower env.testFraction, or mark fewer records "split": "test"',
  });
}

function jsonLines(text: string, file: string, error: TaskFileError): TaskRecord[] {
  const records: TaskRecord[] = [];
  const lines = text.split(/\r?\n/);
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trim();
    if (line === '') continue;
    const place = { file, line: k + 1 };
    try {
      records.push({ value: JSON.parse(line), place });
    } catch (cause) {
      throw error(`invalid JSON (${(cause as Error).message})`, {
        place,
        hint: 'a JSONL file holds one JSON object per line; fix or remove this line',
        cause,
      });
    }
  }
  return records;
}

function jsonDocument(value: unknown, file: string, error: TaskFileError): TaskRecord[] {
  const records = Array.isArray(value) ? value : value && typeof value === 'object' ? (value as { data?: unknown }).data : undefined;
  if (!Array.isArray(records))
    throw error('expected a JSON array of records or an object with a "data" array', {
      place: { file },
      field: 'data',
      hint: 'wrap the records as [{...}, ...] or {"data": [{...}, ...]}, or use one object per line in a .jsonl file',
    });
  return records.map((value: unknown, record) => ({ value, place: { file, record } }));
}

/**
 * The records of a task file: a Parquet file (`.parquet`, read with hyparquet: snappy-compressed or uncompressed
 * pages, structs as objects, lists as arrays), a JSONL file (`.jsonl`/`.ndjson`, one record per line) or a JSON file
 * (an array of records, or `{"data": [...]}`); other extensions are told apart by their content (a lone object is a
 * one-line JSONL file). An empty file has no records. What is unreadable throws the caller's error via `error`.
 */
export async function readTaskRecords(file: string, error: TaskFileError): Promise<TaskRecord[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (cause) {
    throw error(`cannot read the dataset (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message})`, {
      place: { file },
      hint: 'check the path; relative paths resolve from the working directory',
      cause,
    });
  }
  const extension = extname(file).toLowerCase();
  if (extension === '.parquet') {
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file: new Uint8Array(bytes).buffer });
    } catch (cause) {
      throw error(`cannot read the Parquet file (${(cause as Error).message})`, {
        place: { file },
        hint: 'write it with snappy or no compression, or convert it to JSONL',
        cause,
      });
    }
    return rows.map((value, record) => ({ value, place: { file, record } }));
  }
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (extension === '.jsonl' || extension === '.ndjson') return jsonLines(text, file, error);
  let document: unknown;
  let parsed = false;
  try {
    document = JSON.parse(text);
    parsed = true;
  } catch (cause) {
    if (extension === '.json' && text.trim() !== '')
      throw error(`invalid JSON (${(cause as Error).message})`, {
        place: { file },
        hint: 'fix the JSON, or rename the file to .jsonl if it holds one JSON object per line',
        cause,
      });
  }
  const singleRecord =
    extension !== '.json' &&
    parsed &&
    document !== null &&
    typeof document === 'object' &&
    !Array.isArray(document) &&
    !('data' in document);
  return parsed && !singleRecord ? jsonDocument(document, file, error) : jsonLines(text, file, error);
}

/** A record's text at `key`, `a.b` naming a key of a nested object (Parquet structs, verl's `reward_model.ground_truth`). */
export function recordText(record: Record<string, unknown>, key: string): string | undefined {
  const value = recordValue(record, key);
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return String(value);
  return undefined;
}

/** A record's value at `key` (`a.b` for nested objects); undefined where the path is missing. */
export function recordValue(record: Record<string, unknown>, key: string): unknown {
  let value: unknown = record;
  for (const part of key.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/** The first of `keys` the record has as text, and which (UnityMAS-O's field fallbacks: `question`, `query`, ...). */
export function firstRecordText(record: Record<string, unknown>, keys: readonly string[]): { key: string; text: string } | undefined {
  for (const key of keys) {
    const text = recordText(record, key);
    if (text !== undefined) return { key, text };
  }
  return undefined;
}
