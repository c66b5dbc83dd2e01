import { afterAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { createKernel, Environment } from '@drmas/core';
import { CodeEnvironment, verifyCode, type CodeEpisode, type CodeTask } from '../src/index.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

const scratch = new TempProject('env-code-environment');
afterAll(() => scratch.dispose());

/** f(x) = x squared, judged at 0..3: `x + x` is right at 0 and 2 only, so it passes 2 of 4. */
const SQUARE = {
  id: 'square',
  problem: 'Write a JavaScript function f(x) that returns x squared.',
  language: 'javascript',
  fn_name: 'f',
  tests: [0, 1, 2, 3].map((x) => ({ input: [x], output: x * x })),
};

function datasetFile(): string {
  const file = scratch.path('square.jsonl');
  writeFileSync(file, `${JSON.stringify(SQUARE)}\n${JSON.stringify({ ...SQUARE, id: 'held', problem: 'Held out.', split: 'test' })}\n`);
  return file;
}

async function stepOnce(environment: CodeEnvironment, answers: string[]): Promise<CodeEpisode[]> {
  await environment.init();
  const task = environment.batch(0, 1).tasks[0]!;
  const episodes = answers.map(() => environment.reset(task));
  await environment.advance(
    episodes,
    answers.map((content) => ({ type: 'answer', content })),
  );
  return episodes;
}

describe('the code environment', () => {
  test('outcome is the share of tests passed; all_passed, has_code and the run status are metrics', async () => {
    const environment = new CodeEnvironment({ code: { file: datasetFile(), timeoutMs: 300 } });
    const [right, half, none, looping] = await stepOnce(environment, [
      '```js\nfunction f(x) { return x * x; }\n```',
      '<code>function f(x) { return x + x; }</code>',
      'I do not know.',
      '```js\nwhile (true) {}\n```',
    ]);
    expect(environment.test().map((t) => t.id)).toEqual(['held']);
    expect([right!.outcome, half!.outcome, none!.outcome, looping!.outcome]).toEqual([1, 0.5, 0, 0]);
    expect(right!.metrics()).toEqual({ tests_passed: 1, all_passed: 1, has_code: 1, load_error: 0, timeout: 0, memory: 0 });
    expect(half!.metrics()).toMatchObject({ tests_passed: 0.5, all_passed: 0 });
    expect(none!.metrics()).toMatchObject({ has_code: 1, load_error: 1 });
    expect(looping!.metrics()).toMatchObject({ timeout: 1 });
    expect(half!.verdict!.feedback).toBe('2/4 tests passed; test 2: expected 1, got 2; test 4: expected 9, got 6');
    await environment.dispose();
  });

  test('reward: all gives 1 only when every test passes', async () => {
    const environment = new CodeEnvironment({ code: { file: datasetFile(), reward: 'all' } });
    const [right, half] = await stepOnce(environment, [
      '<code>function f(x) { return x * x; }</code>',
      '<code>function f(x) { return x + x; }</code>',
    ]);
    expect([right!.outcome, half!.outcome]).toEqual([1, 0]);
    await environment.dispose();
  });

  test('the plugin provides it as env.name code and resolves env.code.file from the config folder', async () => {
    datasetFile();
    const configFile = scratch.path('drmas.config.json');
    writeFileSync(configFile, JSON.stringify({ plugins: ['env-code'], env: { name: 'code', code: { file: './square.jsonl' } } }));
    const { kernel, config } = await createKernel({ cwd: REPO_ROOT, configPath: configFile });
    expect((config.env as unknown as { code: { file: string } }).code.file).toBe(scratch.path('square.jsonl'));
    const environment = kernel.getNamed(Environment, 'code');
    await environment.init();
    expect(environment.test()).toHaveLength(1);
  });
});

describe('verifyCode', () => {
  const environment = new CodeEnvironment();
  afterAll(() => environment.dispose());
  const task: CodeTask = {
    id: 't',
    prompt: 'p',
    tests: [{ name: 'f(1)', kind: 'call', fn: 'f', args: [1], expected: 2 }],
    language: 'javascript',
    entryPoint: 'f',
    starterCode: 'function f(x) {\n',
    dataSource: 'd',
    split: 'train',
  };

  test('prepends the starter code when the answer only completes the body', async () => {
    const verdict = await verifyCode(task, '<code>return x + 1; }</code>', environment.sandbox);
    expect(verdict).toMatchObject({ passed: 1, total: 1, allPassed: true, status: 'ok', feedback: '1/1 tests passed', source: 'tag' });
  });

  test('stdio tests run the program on each input and compare what it prints', async () => {
    const echo: CodeTask = {
      ...task,
      tests: [
        { name: 'double 21', kind: 'stdio', stdin: '21\n', stdout: '42\n' },
        { name: 'double 5', kind: 'stdio', stdin: '5\n', stdout: '11\n' },
      ],
      starterCode: undefined,
    };
    const verdict = await verifyCode(echo, '```js\nconsole.log(Number(readline()) * 2);\n```', environment.sandbox);
    expect(verdict.tests).toEqual([
      { name: 'double 21', passed: true, stdout: '42\n' },
      { name: 'double 5', passed: false, error: 'output line 1: expected "11", got "10"', stdout: '10\n' },
    ]);
  });

  test('reports the load error as feedback', async () => {
    const verdict = await verifyCode(task, '```js\nfunction f(x) { return x +; }\n```', environment.sandbox);
    expect(verdict).toMatchObject({
      passed: 0,
      status: 'error',
      feedback: "0/1 tests passed; SyntaxError: unexpected token in expression: ';'",
    });
  });
});

describeSlow('the code environment on Python (starts Pyodide)', () => {
  test('a HumanEval-style task: the body completes the starter code; a wrong body fails the check', async () => {
    const file = scratch.path('humaneval.jsonl');
    const record = {
      task_id: 'HumanEval/x',
      prompt: 'def add_three(x):\n    """x plus 3"""\n',
      test: 'def check(candidate):\n    assert candidate(1) == 4\n    assert candidate(-3) == 0\n',
      entry_point: 'add_three',
    };
    writeFileSync(
      file,
      `${JSON.stringify(record)}\n${JSON.stringify({ ...record, task_id: 'h2', prompt: 'def g():\n', split: 'test' })}\n`,
    );
    const environment = new CodeEnvironment({ code: { file, timeoutMs: 10_000 } });
    const [right, wrong] = await stepOnce(environment, [
      '```python\n    return x + 3\n```',
      '```python\ndef add_three(x):\n    return x\n```',
    ]);
    expect([right!.outcome, wrong!.outcome]).toEqual([1, 0]);
    expect(wrong!.verdict!.feedback).toMatch(/^0\/1 tests passed; check: AssertionError/);
    await environment.dispose();
  }, 120_000);
});
