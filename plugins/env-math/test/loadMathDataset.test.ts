import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { DatasetTaskSource, loadMathDataset, MathDatasetError, type MathTask } from '../src/index.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'env-math-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, content: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, content, 'utf8');
  return file;
}

async function loadError(file: string): Promise<MathDatasetError> {
  const error = await loadMathDataset(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MathDatasetError);
  return error as MathDatasetError;
}

describe('loadMathDataset', () => {
  test('JSONL with question/answer, optional fields and blank lines', async () => {
    const file = await write(
      'gsm.jsonl',
      [
        JSON.stringify({ id: 'a', question: 'What is 2 + 2?', answer: '4', data_source: 'toy', level: 1 }),
        '',
        JSON.stringify({ question: 'What is 3 * 3?', answer: 9, source: 'other', level: 'Level 3' }),
        JSON.stringify({ question: 'Natalia sold 48 clips...', answer: 'She sold 48/2 = 24 in May.\n#### 72' }),
      ].join('\n'),
    );
    const tasks = await loadMathDataset(file);
    expect(tasks).toEqual<MathTask[]>([
      { id: 'a', question: 'What is 2 + 2?', answer: '4', dataSource: 'toy', difficulty: 1, split: 'train' },
      { id: 'gsm-3', question: 'What is 3 * 3?', answer: '9', dataSource: 'other', difficulty: 3, split: 'train' },
      { id: 'gsm-4', question: 'Natalia sold 48 clips...', answer: '72', dataSource: 'gsm', split: 'train' },
    ]);
    const overridden = await loadMathDataset(file, { dataSource: 'mine', split: 'test' });
    expect(overridden.every((t) => t.dataSource === 'mine' && t.split === 'test')).toBe(true);
  });

  test('JSON array and {data: [...]}', async () => {
    const records = [
      { question: 'q1', answer: '1' },
      { question: 'q2', answer: '\\boxed{\\frac{1}{2}}' },
    ];
    const array = await loadMathDataset(await write('array.json', JSON.stringify(records)));
    const wrapped = await loadMathDataset(await write('wrapped.json', JSON.stringify({ data: records })));
    expect(array.map((t) => t.answer)).toEqual(['1', '\\frac{1}{2}']);
    expect(wrapped).toEqual(array.map((t) => ({ ...t, id: t.id.replace('array', 'wrapped'), dataSource: 'wrapped' })));
  });

  test('MATH-500 style problem + solution: the last boxed answer, level parsed', async () => {
    const file = await write(
      'math500.jsonl',
      JSON.stringify({
        problem: 'Convert the point $(0,3)$ to polar coordinates.',
        solution: 'We have $r = \\boxed{3}$... so the point is $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$.',
        level: 'Level 2',
        unique_id: 'test/precalculus/807.json',
      }),
    );
    const [task] = await loadMathDataset(file);
    expect(task).toMatchObject({
      id: 'test/precalculus/807.json',
      answer: '\\left( 3, \\frac{\\pi}{2} \\right)',
      difficulty: 2,
      dataSource: 'math500',
    });
  });

  test("UnityMAS-O's field fallbacks: query, ground_truth, target, reward_model.ground_truth, extra_info", async () => {
    const file = await write(
      'fallbacks.jsonl',
      [
        { query: 'q1', ground_truth: '1' },
        { problem: 'q2', target: 2 },
        { question: 'q3', reward_model: { style: 'rule', ground_truth: '\\boxed{3}' }, data_source: 'verl' },
        { extra_info: { question: 'q4', answer: '4' } },
        // `answer` comes before `ground_truth`, `question` before `query`.
        { question: 'q5', query: 'not this', answer: '5', ground_truth: 'not this' },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    );
    const tasks = await loadMathDataset(file);
    expect(tasks.map((t) => [t.question, t.answer, t.dataSource])).toEqual([
      ['q1', '1', 'fallbacks'],
      ['q2', '2', 'fallbacks'],
      ['q3', '3', 'verl'],
      ['q4', '4', 'fallbacks'],
      ['q5', '5', 'fallbacks'],
    ]);
  });

  test('Parquet: the rows of a file written by hyparquet-writer, with its columns read through the same fallbacks', async () => {
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: 'query', data: ['What is 2 + 2?', 'What is 3 * 3?'], type: 'STRING' },
        { name: 'ground_truth', data: ['4', '9'], type: 'STRING' },
        { name: 'data_source', data: ['toy', 'toy'], type: 'STRING' },
        { name: 'level', data: [1, 3], type: 'INT32' },
      ],
    });
    const file = join(dir, 'train.parquet');
    await writeFile(file, new Uint8Array(buffer));
    expect(await loadMathDataset(file)).toEqual<MathTask[]>([
      { id: 'train-0', question: 'What is 2 + 2?', answer: '4', dataSource: 'toy', difficulty: 1, split: 'train' },
      { id: 'train-1', question: 'What is 3 * 3?', answer: '9', dataSource: 'toy', difficulty: 3, split: 'train' },
    ]);
    const broken = await loadError(await write('broken.parquet', 'not parquet'));
    expect(broken.message).toMatch(/^cannot read the Parquet file/);
    const missing = parquetWriteBuffer({ columnData: [{ name: 'query', data: ['q'], type: 'STRING' }] });
    const noAnswer = join(dir, 'noanswer.parquet');
    await writeFile(noAnswer, new Uint8Array(missing));
    expect(await loadError(noAnswer)).toMatchObject({ record: 0, field: 'answer' });
  });

  test('a malformed record names the file, the line and the missing field', async () => {
    const file = await write('bad.jsonl', `${JSON.stringify({ question: 'q', answer: '1' })}\n${JSON.stringify({ answer: '2' })}\n`);
    const error = await loadError(file);
    expect(error).toMatchObject({ file, line: 2, field: 'question' });
    expect(error.message).toMatch(/^line 2: /);
    expect(error.message).toContain('"question"');

    const noAnswer = await loadError(await write('noanswer.jsonl', JSON.stringify({ question: 'q' })));
    expect(noAnswer).toMatchObject({ line: 1, field: 'answer' });

    const noBox = await loadError(await write('nobox.jsonl', JSON.stringify({ problem: 'q', solution: 'it is 3' })));
    expect(noBox).toMatchObject({ line: 1, field: 'solution' });
    expect(noBox.message).toMatch(/\\boxed/);

    const badJson = await loadError(await write('badjson.jsonl', `${JSON.stringify({ question: 'q', answer: '1' })}\n{"question": `));
    expect(badJson).toMatchObject({ line: 2 });
    expect(badJson.message).toMatch(/invalid JSON/);

    const badRecord = await loadError(await write('badrecord.json', JSON.stringify([{ question: 'q', answer: '1' }, { question: 'q' }])));
    expect(badRecord).toMatchObject({ record: 1, field: 'answer' });
    expect(badRecord.message).toContain('record 1');

    const notArray = await loadError(await write('object.json', JSON.stringify({ rows: [] })));
    expect(notArray.field).toBe('data');
  });

  test('empty and missing files are errors', async () => {
    const empty = await loadError(await write('empty.jsonl', '\n\n'));
    expect(empty.message).toMatch(/no records/);
    expect((await loadError(await write('empty.json', '[]'))).message).toMatch(/no records/);
    expect((await loadError(await write('empty2.json', ''))).message).toMatch(/no records/);
    expect((await loadError(join(dir, 'absent.jsonl'))).message).toMatch(/cannot read.*ENOENT/);
  });
});

describe('DatasetTaskSource', () => {
  const tasks: MathTask[] = Array.from({ length: 200 }, (_, i) => ({
    id: `t${i}`,
    question: `What is ${i} + 1?`,
    answer: `${i + 1}`,
    dataSource: 'toy',
    split: 'train',
  }));

  test('testFraction holds out questions by hash, disjoint from train, stable across seeds', () => {
    const source = new DatasetTaskSource({ tasks: [...tasks, { ...tasks[0]!, id: 'dup' }], testFraction: 0.2, seed: 1 });
    const test = source.test();
    expect(test.length).toBeGreaterThan(20);
    expect(test.length).toBeLessThan(60);
    const testQuestions = new Set(test.map((t) => t.question));
    const trainQuestions = Array.from({ length: source.trainSize }, (_, i) => source.train(i).question);
    expect(trainQuestions.filter((q) => testQuestions.has(q))).toEqual([]);
    expect(test.every((t) => t.split === 'test')).toBe(true);
    const other = new DatasetTaskSource({ tasks, testFraction: 0.2, seed: 2 });
    expect(other.test().map((t) => t.id)).toEqual(test.filter((t) => t.id !== 'dup').map((t) => t.id));
  });

  test('a separate test list removes its questions from train', () => {
    const source = new DatasetTaskSource({ tasks, testTasks: [{ ...tasks[3]!, id: 'x', split: 'test' }] });
    expect(source.trainSize).toBe(199);
    expect(source.test().map((t) => t.id)).toEqual(['x']);
  });

  test('batches resume from a cursor and reshuffle per epoch', () => {
    const source = new DatasetTaskSource({ tasks: tasks.slice(0, 15), seed: 4 });
    const a = source.batch(0, 10);
    const b = new DatasetTaskSource({ tasks: tasks.slice(0, 15), seed: 4 }).batch(a.nextCursor, 10);
    expect([...a.tasks, ...b.tasks]).toEqual(source.batch(0, 20).tasks);
    const epoch0 = source.batch(0, 15).tasks.map((t) => t.id);
    const epoch1 = source.batch(15, 15).tasks.map((t) => t.id);
    expect([...epoch0].sort()).toEqual([...epoch1].sort());
    expect(epoch0).not.toEqual(epoch1);
  });

  test('fromFiles with a separate test file', async () => {
    const train = await write(
      'train.jsonl',
      tasks
        .slice(0, 5)
        .map((t) => JSON.stringify({ question: t.question, answer: t.answer }))
        .join('\n'),
    );
    const test = await write('test.json', JSON.stringify([{ problem: tasks[0]!.question, solution: '\\boxed{1}' }]));
    const source = await DatasetTaskSource.fromFiles({ file: train, testFile: test, seed: 0 });
    expect(source.trainSize).toBe(4);
    expect(source.test()).toHaveLength(1);
  });

  test('invalid options are rejected', () => {
    expect(() => new DatasetTaskSource({ tasks: [] })).toThrow(/non-empty/);
    expect(() => new DatasetTaskSource({ tasks, testFraction: 1 })).toThrow(/testFraction/);
    expect(() => new DatasetTaskSource({ tasks: tasks.slice(0, 1), testTasks: tasks.slice(0, 1) })).toThrow(/none is left/);
  });
});
