import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { firstRecordText, QUESTION_FIELDS, readTaskRecords, recordValue } from '@drmas/core';
import { DataFileError } from '../errors.js';
import type { SearchDocument } from '../retrieval/Retriever.js';
import type { SearchQuestion } from './SearchQuestion.js';

export interface QaJsonlOptions {
  /** `dataSource` of questions whose line has no `data_source`; default: the file name without extension. */
  dataSource?: string;
}

/** Reads non-empty lines of a JSONL file one at a time (corpora such as wiki-18 do not fit one string). */
async function* jsonlRecords(file: string): AsyncGenerator<{ line: number; record: Record<string, unknown> }> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      const parsed = parseLine(file, line, text);
      if (parsed) yield { line, record: parsed };
    }
  } catch (error) {
    if (error instanceof DataFileError) throw error;
    throw new DataFileError(file, line, undefined, `cannot read the file: ${(error as Error).message}`, {
      cause: error,
      hint: 'check the path and that the file is readable',
    });
  } finally {
    lines.close();
    stream.destroy();
  }
}

function parseLine(file: string, line: number, text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DataFileError(file, line, undefined, `not valid JSON (${(error as Error).message}); each line must be one JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DataFileError(file, line, undefined, 'expected a JSON object on this line');
  }
  return value as Record<string, unknown>;
}

/** A wrong value, for a message: its JSON, cut at 80 characters (a record's field may hold megabytes). */
function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 80)}...` : json;
}

function readId(file: string, line: number, record: Record<string, unknown>, at: { record?: number } = {}): string | undefined {
  const id = record.id;
  if (id === undefined) return undefined;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return String(id);
  throw new DataFileError(file, line, 'id', `must be a string or number, got ${shown(id)}`, at);
}

/** Where the golden answers may be, in order: Search-R1's and FlashRAG's keys, then UnityMAS-O's fallbacks. */
const ANSWER_FIELDS = ['golden_answers', 'answer', 'answers', 'ground_truth', 'target', 'reward_model.ground_truth', 'extra_info.answer'];

/** A value of an answer field as a list: a string or number alone, a list, or verl's `{"target": [...]}`. */
function answerList(value: unknown): { list: unknown[]; nested: string } {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'target' in value) {
    const inner = answerList(value.target);
    return { list: inner.list, nested: `.target${inner.nested}` };
  }
  return { list: Array.isArray(value) ? value : [value], nested: Array.isArray(value) ? '[]' : '' };
}

/**
 * Parses one QA record: the question from `question` (or `query`, `problem`, `extra_info.question`), the golden
 * answers from `golden_answers` (or `answer`, `answers`, `ground_truth`, `target`, `reward_model.ground_truth`,
 * `extra_info.answer`; a string, a number, a list, or `{"target": [...]}` as in Search-R1's Parquet files), optional
 * `id` and `data_source`. `file` and `line` (or `place.record`) are for errors.
 */
export function parseQaRecord(
  record: Record<string, unknown>,
  file: string,
  line: number,
  options: QaJsonlOptions & { record?: number } = {},
): SearchQuestion {
  const at = options.record !== undefined ? { record: options.record } : {};
  const fail = (field: string, message: string): never => {
    throw new DataFileError(file, line, field, message, at);
  };
  const question = firstRecordText(record, QUESTION_FIELDS)?.text;
  if (question === undefined) fail('question', `must be a non-empty string, got ${shown(record.question)}`);
  const field = ANSWER_FIELDS.find((key) => recordValue(record, key) !== undefined && recordValue(record, key) !== null);
  if (field === undefined) {
    fail(
      'golden_answers',
      `missing: give the golden answers as "golden_answers" (a list of strings) or ${ANSWER_FIELDS.slice(1)
        .map((k) => `"${k}"`)
        .join(', ')}`,
    );
  }
  const { list, nested } = answerList(recordValue(record, field!));
  const answers: string[] = [];
  list.forEach((a, i) => {
    if (typeof a === 'string' && a.trim() !== '') answers.push(a);
    else if (typeof a === 'number' && Number.isFinite(a)) answers.push(String(a));
    else fail(`${field}${nested.replace(/\[\]$/, `[${i}]`)}`, `must be a non-empty string, got ${shown(a)}`);
  });
  if (answers.length === 0) fail(field!, 'must hold at least one answer');
  const dataSource = record.data_source;
  if (dataSource !== undefined && typeof dataSource !== 'string') fail('data_source', `must be a string, got ${shown(dataSource)}`);
  const id = readId(file, line, record, at);
  return {
    id: id ?? (options.record !== undefined ? `${basename(file)}#${options.record}` : `${basename(file)}:${line}`),
    question: question!.trim(),
    answers,
    supportingDocIds: [],
    dataSource: (dataSource as string | undefined) ?? options.dataSource ?? basename(file).replace(/\.[^.]*$/, ''),
  };
}

/**
 * Loads external QA data (FlashRAG / Search-R1 style JSONL): one object per line with `question` and
 * `golden_answers` (list) or `answer` (string or list); optional `id` and `data_source`.
 */
export async function loadQaJsonl(file: string, options: QaJsonlOptions = {}): Promise<SearchQuestion[]> {
  const questions: SearchQuestion[] = [];
  const seen = new Map<string, number>();
  for await (const { line, record } of jsonlRecords(file)) {
    const q = parseQaRecord(record, file, line, options);
    const first = seen.get(q.id);
    if (first !== undefined) throw new DataFileError(file, line, 'id', `duplicate id "${q.id}" (first on line ${first})`);
    seen.set(q.id, line);
    questions.push(q);
  }
  return questions;
}

/**
 * Loads QA data from a JSONL file (streamed, `loadQaJsonl`), or a Parquet or JSON file (Search-R1's and verl's
 * `train.parquet` layout included) read by core's task-file reader, the one the math environment's datasets use;
 * every record goes through `parseQaRecord`'s field fallbacks. Ids must be unique.
 */
export async function loadQaFile(file: string, options: QaJsonlOptions = {}): Promise<SearchQuestion[]> {
  if (!/\.(parquet|json)$/i.test(file)) return loadQaJsonl(file, options);
  const records = await readTaskRecords(
    file,
    (problem, { place, field, hint, cause }) =>
      new DataFileError(file, place.line ?? 0, field, problem, { hint, cause, record: place.record }),
  );
  const questions: SearchQuestion[] = [];
  const seen = new Map<string, number>();
  for (const { value, place } of records) {
    const record = place.record ?? 0;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new DataFileError(file, 0, undefined, `expected an object, got ${shown(value)}`, { record });
    }
    const q = parseQaRecord(value as Record<string, unknown>, file, 0, { ...options, record });
    const first = seen.get(q.id);
    if (first !== undefined) throw new DataFileError(file, 0, 'id', `duplicate id "${q.id}" (first in record ${first})`, { record });
    seen.set(q.id, record);
    questions.push(q);
  }
  if (questions.length === 0)
    throw new DataFileError(file, 0, undefined, 'the file holds no questions', { hint: 'add at least one record' });
  return questions;
}

/** Parses one corpus record `{id, contents}`; `file` and `line` are for errors. */
export function parseCorpusRecord(record: Record<string, unknown>, file: string, line: number): SearchDocument {
  const id = readId(file, line, record);
  if (id === undefined) throw new DataFileError(file, line, 'id', 'missing: every corpus line needs an "id"');
  const { contents } = record;
  if (typeof contents !== 'string') {
    throw new DataFileError(
      file,
      line,
      'contents',
      `must be a string in Search-R1 format ("\\"title\\"\\ntext"), got ${contents === undefined ? 'nothing' : shown(contents)}`,
    );
  }
  return { id, contents };
}

/** Loads a Search-R1 corpus: one `{"id": ..., "contents": "\"title\"\ntext"}` object per line; ids must be unique. */
export async function loadCorpusJsonl(file: string): Promise<SearchDocument[]> {
  const documents: SearchDocument[] = [];
  const seen = new Map<string, number>();
  for await (const { line, record } of jsonlRecords(file)) {
    const doc = parseCorpusRecord(record, file, line);
    const first = seen.get(doc.id);
    if (first !== undefined) throw new DataFileError(file, line, 'id', `duplicate id "${doc.id}" (first on line ${first})`);
    seen.set(doc.id, line);
    documents.push(doc);
  }
  return documents;
}

/** Serialises documents as a Search-R1 corpus JSONL text (only `id` and `contents`), e.g. to index elsewhere. */
export function formatCorpusJsonl(documents: Iterable<SearchDocument>): string {
  let out = '';
  for (const d of documents) out += `${JSON.stringify({ id: d.id, contents: d.contents })}\n`;
  return out;
}
