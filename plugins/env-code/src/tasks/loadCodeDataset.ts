import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { DrmasError, hashParts } from '@drmas/core';
import { CODE_LANGUAGES, type CodeLanguage, type CodeTest } from '../sandbox/CodeSandbox.js';
import type { CodeSplit, CodeTask } from './CodeTask.js';

export interface LoadCodeDatasetOptions {
  /** The language of records without a `language` field. Default `python` (MBPP, HumanEval, APPS are Python). */
  language?: CodeLanguage;
  /** Overrides each record's `split`. */
  split?: CodeSplit;
  /** Overrides each record's `data_source`/`source`; default the file name without extension. */
  dataSource?: string;
}

/** Where a record sits: a JSONL line (1-based) or a JSON array position (0-based). */
interface Place {
  file: string;
  line?: number;
  record?: number;
}

const RECORD_SHAPE =
  'a record needs a prompt ("prompt", "problem", "text" or "question") and tests ("tests", MBPP\'s "test_list", or HumanEval\'s "test" with "entry_point"); see the env-code README';

function fail(place: Place, problem: string, field?: string, hint = RECORD_SHAPE): never {
  const where = place.line !== undefined ? `line ${place.line}: ` : place.record !== undefined ? `record ${place.record}: ` : '';
  throw new DrmasError('DATASET_INVALID', `${where}${problem}`, { file: place.file, key: field, hint });
}

function text(record: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

function readLanguage(record: Record<string, unknown>, place: Place, fallback: CodeLanguage): CodeLanguage {
  const raw = text(record, 'language', 'lang');
  if (raw === undefined) return fallback;
  const language = ({ js: 'javascript', javascript: 'javascript', py: 'python', python: 'python', python3: 'python' } as const)[
    raw.toLowerCase() as 'js'
  ];
  if (!language) fail(place, `unknown language ${JSON.stringify(raw)}`, 'language', `use one of ${CODE_LANGUAGES.join(', ')}`);
  return language;
}

/** `input`/`output` pairs: calls of the entry point when there is one (input = its argument list), else stdin/stdout. */
function ioTests(inputs: unknown[], outputs: unknown[], entryPoint: string | undefined, place: Place, field: string): CodeTest[] {
  if (inputs.length !== outputs.length)
    fail(place, `"${field}" has ${inputs.length} inputs but ${outputs.length} outputs`, field, 'give one output per input');
  return inputs.map((input, i) => {
    const output = outputs[i];
    if (entryPoint !== undefined) {
      const args = Array.isArray(input) ? input : [input];
      return { name: `test ${i + 1}`, kind: 'call', fn: entryPoint, args, expected: output };
    }
    if (typeof input !== 'string' || typeof output !== 'string')
      fail(
        place,
        `"${field}" input/output ${i + 1} are not strings, and there is no "entry_point"/"fn_name" to call`,
        field,
        'stdin/stdout tests are strings; add "entry_point" for function calls',
      );
    return { name: `test ${i + 1}`, kind: 'stdio', stdin: input, stdout: output };
  });
}

function readTests(record: Record<string, unknown>, place: Place, entryPoint: string | undefined): CodeTest[] {
  const setup = text(record, 'test_setup_code');
  const asserts = (snippets: unknown[], field: string): CodeTest[] =>
    snippets.map((snippet, i) => {
      if (typeof snippet !== 'string' || snippet.trim() === '') fail(place, `"${field}"[${i}] is not a code string`, field);
      return { name: `test ${i + 1}`, kind: 'assert', code: setup ? `${setup}\n${snippet}` : snippet };
    });
  const tests = record.tests ?? record.test_list;
  const field = record.tests !== undefined ? 'tests' : 'test_list';
  if (Array.isArray(tests)) {
    if (tests.length === 0) fail(place, `"${field}" is empty`, field);
    if (tests.every((t) => typeof t === 'string')) return asserts(tests, field);
    if (tests.every((t) => t !== null && typeof t === 'object' && 'input' in t && 'output' in t)) {
      const pairs = tests as Array<{ input: unknown; output: unknown }>;
      return ioTests(
        pairs.map((p) => p.input),
        pairs.map((p) => p.output),
        entryPoint,
        place,
        field,
      );
    }
    fail(place, `"${field}" mixes kinds: use all assertion strings or all {"input", "output"} objects`, field);
  }
  let table = tests;
  if (typeof table === 'string' && table.trim().startsWith('{')) {
    try {
      table = JSON.parse(table);
    } catch {
      fail(place, `"${field}" is a string that is not valid JSON`, field);
    }
  }
  if (table !== null && typeof table === 'object') {
    const { inputs, outputs } = table as { inputs?: unknown; outputs?: unknown };
    if (!Array.isArray(inputs) || !Array.isArray(outputs)) fail(place, `"${field}" needs "inputs" and "outputs" arrays`, field);
    return ioTests(inputs, outputs, entryPoint, place, field);
  }
  const check = text(record, 'test');
  if (check !== undefined) {
    if (entryPoint === undefined) fail(place, 'a HumanEval "test" needs "entry_point", the function passed to check()', 'entry_point');
    return [{ name: 'check', kind: 'assert', code: `${check}\ncheck(${entryPoint})` }];
  }
  return fail(place, 'missing tests', 'tests');
}

function recordToTask(raw: unknown, place: Place, options: LoadCodeDatasetOptions, defaults: { source: string; id: string }): CodeTask {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(place, 'record is not a JSON object');
  const record = raw as Record<string, unknown>;
  const prompt = text(record, 'prompt', 'problem', 'text', 'question');
  if (prompt === undefined) fail(place, 'missing the prompt', 'prompt');
  let fnName = text(record, 'entry_point', 'fn_name');
  if (fnName === undefined && record.tests && typeof record.tests === 'object' && !Array.isArray(record.tests))
    fnName = text(record.tests as Record<string, unknown>, 'fn_name');
  const language = readLanguage(record, place, options.language ?? 'python');
  const tests = readTests(record, place, fnName);
  // HumanEval's prompt is the signature and docstring the solution completes.
  const starterCode = text(record, 'starter_code') ?? (text(record, 'test') !== undefined ? prompt : undefined);
  const canonical = text(record, 'canonical_solution');
  const solution = canonical !== undefined && starterCode !== undefined ? `${starterCode}${canonical}` : text(record, 'code', 'solution');
  const split = options.split ?? (record.split === 'train' || record.split === 'test' ? record.split : 'train');
  return {
    id: text(record, 'task_id', 'id') ?? defaults.id,
    prompt,
    ...(starterCode !== undefined ? { starterCode } : {}),
    ...(fnName !== undefined ? { entryPoint: fnName } : {}),
    tests,
    language,
    ...(solution !== undefined ? { solution } : {}),
    dataSource: options.dataSource ?? text(record, 'data_source', 'source') ?? defaults.source,
    split,
  };
}

/**
 * Reads code tasks from JSONL (`.jsonl`/`.ndjson`, one record a line) or JSON (an array, or `{"data": [...]}`).
 * Field fallbacks: prompt from `prompt`/`problem`/`text`/`question`; tests from `tests` (assertion strings,
 * `{input, output}` objects, or `{inputs, outputs, fn_name}`), MBPP's `test_list` (+ `test_setup_code`), or
 * HumanEval's `test` + `entry_point`; `starter_code`; `language`; `task_id`/`id`; `split`. Throws DATASET_INVALID
 * naming the file, line or record and the field.
 */
export async function loadCodeDataset(file: string, options: LoadCodeDatasetOptions = {}): Promise<CodeTask[]> {
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
  if (content.charCodeAt(0) === 0xfeff) content = content.slice(1);
  const source = basename(file, extname(file));
  const tasks: CodeTask[] = [];
  if (/\.(jsonl|ndjson)$/i.test(file)) {
    content.split(/\r?\n/).forEach((line, k) => {
      if (line.trim() === '') return;
      const place = { file, line: k + 1 };
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (cause) {
        fail(place, `invalid JSON (${(cause as Error).message})`, undefined, 'a JSONL file holds one JSON object per line');
      }
      tasks.push(recordToTask(value, place, options, { source, id: `${source}-${k + 1}` }));
    });
  } else {
    let document: unknown;
    try {
      document = JSON.parse(content);
    } catch (cause) {
      fail(
        { file },
        `invalid JSON (${(cause as Error).message})`,
        undefined,
        'fix the JSON, or name the file .jsonl if it holds one record per line',
      );
    }
    const records = Array.isArray(document) ? document : (document as { data?: unknown } | null)?.data;
    if (!Array.isArray(records)) fail({ file }, 'expected a JSON array of records or {"data": [...]}', 'data');
    records.forEach((raw, k) => tasks.push(recordToTask(raw, { file, record: k }, options, { source, id: `${source}-${k}` })));
  }
  if (tasks.length === 0) fail({ file }, 'the dataset contains no records');
  return tasks;
}

/** The held-out side of a dataset: `testFraction` by a hash of the prompt, else records whose `split` is `test`. */
export function splitCodeTasks(tasks: readonly CodeTask[], testFraction: number | undefined): { train: CodeTask[]; test: CodeTask[] } {
  const held = (task: CodeTask) =>
    testFraction !== undefined
      ? hashParts('drmas/env-code/dataset-held-out', task.prompt.trim()) / 4294967296 < testFraction
      : task.split === 'test';
  const train = tasks.filter((t) => !held(t)).map((t) => ({ ...t, split: 'train' as const }));
  const test = tasks.filter(held).map((t) => ({ ...t, split: 'test' as const }));
  return { train, test };
}
