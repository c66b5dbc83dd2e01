import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { DataFileError, loadQaFile, SearchEnvironment, type SearchQuestion } from '../src/index.js';

// Questions from Parquet (and JSON) files, written here by hyparquet-writer in the layouts that reach training:
// Search-R1's (`question`, `golden_answers` list), verl's (`reward_model.ground_truth.target`, `extra_info`), and
// UnityMAS-O's fallbacks (`query`, `problem`, `ground_truth`, ...).
const dir = mkdtempSync(path.join(tmpdir(), 'env-search-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function parquet(name: string, columnData: Parameters<typeof parquetWriteBuffer>[0]['columnData']): string {
  const file = path.join(dir, name);
  writeFileSync(file, new Uint8Array(parquetWriteBuffer({ columnData })));
  return file;
}

const question = (id: string, text: string, answers: string[], dataSource: string): SearchQuestion => ({
  id,
  question: text,
  answers,
  supportingDocIds: [],
  dataSource,
});

describe('QA questions from Parquet and JSON files', () => {
  test("Search-R1's layout: question, a golden_answers list, data_source, id", async () => {
    const file = parquet('nq_train.parquet', [
      { name: 'id', data: ['train_0', 'train_1'], type: 'STRING' },
      { name: 'question', data: ['where was varnok telli born?', 'who founded osmara?'], type: 'STRING' },
      { name: 'golden_answers', data: [['Osmara', 'Osmara City'], ['Lune']] },
      { name: 'data_source', data: ['nq', 'nq'], type: 'STRING' },
    ]);
    expect(await loadQaFile(file)).toEqual([
      question('train_0', 'where was varnok telli born?', ['Osmara', 'Osmara City'], 'nq'),
      question('train_1', 'who founded osmara?', ['Lune'], 'nq'),
    ]);
  });

  test("verl's and UnityMAS-O's fallbacks: query or extra_info.question; reward_model.ground_truth.target, ground_truth or extra_info.answer", async () => {
    const verl = parquet('hotpot.parquet', [
      { name: 'query', data: ['q one', null], type: 'STRING' },
      { name: 'extra_info', data: [{ index: 0 }, { question: 'q two', answer: 'Beta' }] },
      { name: 'reward_model', data: [{ ground_truth: { target: ['Alpha', 'A'] }, style: 'rule' }, null] },
    ]);
    expect(await loadQaFile(verl)).toEqual([
      question('hotpot.parquet#0', 'q one', ['Alpha', 'A'], 'hotpot'),
      question('hotpot.parquet#1', 'q two', ['Beta'], 'hotpot'),
    ]);
    const json = path.join(dir, 'math_style.json');
    writeFileSync(
      json,
      JSON.stringify([
        { problem: 'q three', ground_truth: 7 },
        { question: 'q four', target: ['Delta'] },
      ]),
    );
    expect(await loadQaFile(json)).toEqual([
      question('math_style.json#0', 'q three', ['7'], 'math_style'),
      question('math_style.json#1', 'q four', ['Delta'], 'math_style'),
    ]);
  });

  test('a record without answers, or with a bad one, names the file, the record and the field', async () => {
    const noAnswer = parquet('no_answer.parquet', [
      { name: 'question', data: ['fine', 'lacking'], type: 'STRING' },
      { name: 'answer', data: ['a', null], type: 'STRING' },
    ]);
    const error = await loadQaFile(noAnswer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect(error).toMatchObject({ code: 'DATASET_INVALID', file: noAnswer, record: 1, field: 'golden_answers' });
    expect((error as Error).message).toMatch(/^record 1 \(field "golden_answers"\): missing/);

    const badTarget = parquet('bad_target.parquet', [
      { name: 'question', data: ['q'], type: 'STRING' },
      { name: 'reward_model', data: [{ ground_truth: { target: ['ok', ''] } }] },
    ]);
    await expect(loadQaFile(badTarget)).rejects.toMatchObject({ record: 0, field: 'reward_model.ground_truth.target[1]' });
    const broken = path.join(dir, 'broken.parquet');
    writeFileSync(broken, 'not parquet');
    await expect(loadQaFile(broken)).rejects.toMatchObject({
      code: 'DATASET_INVALID',
      message: expect.stringMatching(/^cannot read the Parquet file/),
    });
  });

  test('env.questionsFile takes a Parquet file: the environment hands out its questions', async () => {
    const questions = parquet('kb.parquet', [
      { name: 'question', data: ['where was varnok telli born?'], type: 'STRING' },
      { name: 'golden_answers', data: [['Osmara']] },
    ]);
    const corpus = path.join(dir, 'corpus.jsonl');
    writeFileSync(corpus, `${JSON.stringify({ id: 'd1', contents: '"Varnok Telli"\nborn in Osmara' })}\n`);
    const environment = new SearchEnvironment({ questionsFile: questions, corpusFile: corpus, testFraction: 0 });
    await environment.init();
    expect(environment.batch(0, 1).tasks.map((task) => [task.question, task.answers])).toEqual([
      ['where was varnok telli born?', ['Osmara']],
    ]);
  });
});
