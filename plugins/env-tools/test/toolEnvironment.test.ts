import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { DrmasError } from '@drmas/core';
import {
  answerMatches,
  arithmeticTasks,
  fileTasks,
  loadToolTasks,
  NO_CALL_FEEDBACK,
  syntheticToolTasks,
  ToolEnvironment,
} from '../src/index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'env-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (content: string) => ({ type: 'answer', content });

describe('synthetic tool tasks', () => {
  const options = { seed: 3, kinds: [arithmeticTasks, fileTasks], trainSize: 300, testSize: 40 };

  test('deterministic, the held-out questions never in training, each answer what its tool gives', () => {
    const { train, test: held } = syntheticToolTasks(options);
    expect(syntheticToolTasks(options).train).toEqual(train);
    const trained = new Set(train.map((t) => t.question + (t.files ? JSON.stringify(t.files) : '')));
    expect(held.filter((t) => trained.has(t.question + (t.files ? JSON.stringify(t.files) : '')))).toEqual([]);
    expect(new Set(train.map((t) => t.dataSource))).toEqual(new Set(['tools-arithmetic', 'tools-file']));
    for (const task of train.filter((t) => t.dataSource === 'tools-arithmetic')) {
      const [, a, op, b] = /^What is (\d+) ([*+-]) (\d+)\?$/.exec(task.question)!;
      const x = BigInt(a!);
      const y = BigInt(b!);
      expect(task.answer).toBe(String(op === '*' ? x * y : op === '+' ? x + y : x - y));
    }
    for (const task of train.filter((t) => t.dataSource === 'tools-file')) {
      const file = /^What is in (\S+)\?$/.exec(task.question)![1]!;
      expect(task.files![file]).toBe(task.answer);
    }
  });
});

describe('answers', () => {
  test('numbers compare as numbers, text after normalisation', () => {
    expect(answerMatches('1,200.50', '1200.5')).toBe(true);
    expect(answerMatches('-0042', '-42')).toBe(true);
    expect(answerMatches('42.', '42')).toBe(true);
    expect(answerMatches('4.2', '42')).toBe(false);
    expect(answerMatches('-42', '42')).toBe(false);
    expect(answerMatches('the Vrulan river', 'Vrulan River')).toBe(true);
  });
});

describe('the tools environment', () => {
  test('a call, its result in the observation, then the answer; a bad turn gets feedback, never an exception', async () => {
    const env = new ToolEnvironment({
      maxRounds: 4,
      tools: { kinds: ['file'], trainSize: 8, testSize: 4, formatReward: 0.1, callPenalty: 0.02 },
    });
    await env.init();
    const task = env.batch(0, 1).tasks[0]!;
    const episode = env.reset(task);
    expect(episode.variables()).toMatchObject({ question: task.question, tool_names: 'calculator, fs' });
    const file = /^What is in (\S+)\?$/.exec(task.question)![1]!;
    await env.advance([episode], [say('no idea')]);
    expect(episode.observation()).toBe(`<tool_response>${NO_CALL_FEEDBACK}</tool_response>`);
    await env.advance(
      [episode],
      [say(`<tool_call>{"name": "fs", "arguments": {"op": "read", "path": "${file}"}}</tool_call><tool_call>{"name": "calc"}</tool_call>`)],
    );
    expect(episode.observation().split('\n').slice(1)).toEqual([
      `<tool_call>{"name":"fs","arguments":{"op":"read","path":"${file}"}}</tool_call>`,
      `<tool_response>${task.answer}</tool_response>`,
      '<tool_call>{"name":"calc","arguments":{}}</tool_call>',
      '<tool_response>error: no tool is called "calc". Did you mean "calculator"? Tools: calculator, fs</tool_response>',
    ]);
    expect(episode.done).toBe(false);
    await env.advance([episode], [say(`<answer>${task.answer}</answer>`)]);
    expect(episode.done).toBe(true);
    expect(episode.roundScore).toBe(1);
    // Right (1), two of three turns well-formed (0.1 x 2/3), two calls (-0.02 x 2).
    expect(episode.outcome).toBeCloseTo(1 + 0.1 * (2 / 3) - 0.04, 12);
    expect(episode.metrics()).toEqual({ success: 1, calls: 2, tool_errors: 1, answered: 1, format: 2 / 3 });
    expect(episode.judge(say('<answer>0</answer>'))).toBe(0);
  });

  test('the default outcome is 1 for the right answer, 0 for a wrong one', async () => {
    const env = new ToolEnvironment({ tools: { kinds: ['file'], trainSize: 4, testSize: 2 } });
    await env.init();
    const [a, b] = env.batch(0, 2).tasks;
    const right = env.reset(a!);
    const wrong = env.reset(b!);
    await env.advance([right, wrong], [say(`<answer>${a!.answer}</answer>`), say('<answer>12345678</answer>')]);
    expect([right.outcome, wrong.outcome, right.done, wrong.done]).toEqual([1, 0, true, true]);
  });

  test('an unknown tool in env.tools.enabled is UNKNOWN_NAME naming the key and the tools there are', async () => {
    const env = new ToolEnvironment({ tools: { enabled: ['calculator', 'browser'], trainSize: 4, testSize: 1 } });
    const error = await env.init().catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key }).toEqual({ code: 'UNKNOWN_NAME', key: 'env.tools.enabled' });
    expect((error as Error).message).toBe('no tool named "browser" is registered (registered: calculator, fs)');
  });

  test('a task kind no tool offers is UNKNOWN_NAME at env.tools.kinds, with the closest kind', async () => {
    const env = new ToolEnvironment({ tools: { kinds: ['arithmetic', 'files'], trainSize: 4, testSize: 1 } });
    const error = await env.init().catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, key: error.key, hint: error.hint }).toEqual({
      code: 'UNKNOWN_NAME',
      key: 'env.tools.kinds',
      hint: 'Did you mean "file"?',
    });
    expect((error as Error).message).toBe('no tool offers tasks of kind "files" (offered: arithmetic, file)');
  });
});

describe('loadToolTasks', () => {
  test('JSONL with files and splits; the environment uses them', async () => {
    const file = path.join(dir, 'mine.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ question: 'What is in /x.txt?', answer: 7, files: { '/x.txt': '7' } }),
        '',
        JSON.stringify({ question: 'Capital of Ruritania?', answer: 'Strelsau', split: 'test' }),
      ].join('\n'),
    );
    expect(await loadToolTasks(file)).toEqual([
      { id: 'mine-1', dataSource: 'mine', question: 'What is in /x.txt?', answer: '7', files: { '/x.txt': '7' } },
      { id: 'mine-3', dataSource: 'mine', question: 'Capital of Ruritania?', answer: 'Strelsau', split: 'test' },
    ]);
    const env = new ToolEnvironment({ tools: { file } });
    await env.init();
    expect(env.test().map((t) => t.question)).toEqual(['Capital of Ruritania?']);
    const episode = env.reset(env.batch(0, 1).tasks[0]!);
    await env.advance([episode], [say('<tool_call>{"name": "fs", "arguments": {"op": "read", "path": "/x.txt"}}</tool_call>')]);
    expect(episode.observation()).toContain('<tool_response>7</tool_response>');
  });

  test('a file whose every record is held out is DATASET_INVALID at env.tools.file', async () => {
    const file = path.join(dir, 'all-test.jsonl');
    writeFileSync(file, `${JSON.stringify({ question: 'q', answer: 'a', split: 'test' })}\n`);
    const error = await new ToolEnvironment({ tools: { file } }).init().catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, file: error.file, key: error.key, message: error.message }).toEqual({
      code: 'DATASET_INVALID',
      file,
      key: 'env.tools.file',
      message: `no training task is left in ${file} once the held-out tasks are set apart`,
    });
  });

  test('bad records name the file, the line and the field', async () => {
    const file = path.join(dir, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify({ question: 'q', answer: 'a' })}\n${JSON.stringify({ question: 'q2', files: { '/a': 1 } })}\n`);
    const error = await loadToolTasks(file).catch((e: unknown) => e);
    expect(DrmasError.is(error) && { code: error.code, file: error.file, message: error.message }).toEqual({
      code: 'DATASET_INVALID',
      file,
      message: expect.stringMatching(/^line 2: answer: /),
    });
    writeFileSync(file, '{"question": "q", "answer": "a"}\n{oops\n');
    await expect(loadToolTasks(file)).rejects.toThrow(/line 2: invalid JSON/);
  });
});
