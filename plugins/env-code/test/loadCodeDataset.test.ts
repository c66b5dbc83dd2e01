import { afterAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { DrmasError } from '@drmas/core';
import { loadCodeDataset, splitCodeTasks } from '../src/index.js';
import { TempProject } from '../../../test/support/tempProject.js';

const scratch = new TempProject('env-code-datasets');
afterAll(() => scratch.dispose());

function file(name: string, content: string): string {
  const target = scratch.path(name);
  writeFileSync(target, content);
  return target;
}

const jsonl = (...records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n');

describe('loadCodeDataset', () => {
  test('MBPP records: text, code, test_list (with test_setup_code)', async () => {
    const tasks = await loadCodeDataset(
      file(
        'mbpp.jsonl',
        jsonl({
          task_id: 11,
          text: 'Write a function to add two numbers.',
          code: 'def add(a, b):\n    return a + b',
          test_list: ['assert add(1, 2) == 3', 'assert add(0, 0) == 0'],
          test_setup_code: 'import math',
        }),
      ),
    );
    expect(tasks).toEqual([
      {
        id: '11',
        prompt: 'Write a function to add two numbers.',
        tests: [
          { name: 'test 1', kind: 'assert', code: 'import math\nassert add(1, 2) == 3' },
          { name: 'test 2', kind: 'assert', code: 'import math\nassert add(0, 0) == 0' },
        ],
        language: 'python',
        solution: 'def add(a, b):\n    return a + b',
        dataSource: 'mbpp',
        split: 'train',
      },
    ]);
  });

  test('HumanEval records: the prompt is the starter code, test + entry_point become one check', async () => {
    const [task] = await loadCodeDataset(
      file(
        'humaneval.json',
        JSON.stringify([
          {
            task_id: 'HumanEval/0',
            prompt: 'def inc(x):\n    """Add one."""\n',
            canonical_solution: '    return x + 1\n',
            test: 'def check(candidate):\n    assert candidate(1) == 2\n',
            entry_point: 'inc',
          },
        ]),
      ),
    );
    expect(task).toMatchObject({
      id: 'HumanEval/0',
      starterCode: 'def inc(x):\n    """Add one."""\n',
      entryPoint: 'inc',
      solution: 'def inc(x):\n    """Add one."""\n    return x + 1\n',
      tests: [{ name: 'check', kind: 'assert', code: 'def check(candidate):\n    assert candidate(1) == 2\n\ncheck(inc)' }],
    });
  });

  test('problem/starter_code/tests records: input/output pairs call the entry point, or feed stdin without one', async () => {
    const tasks = await loadCodeDataset(
      file(
        'unity.jsonl',
        jsonl(
          { problem: 'Double it.', language: 'js', fn_name: 'f', tests: [{ input: [2], output: 4 }], split: 'test' },
          { problem: 'Echo.', starter_code: '# read a line', tests: { inputs: ['hi\n'], outputs: ['hi\n'] } },
        ),
      ),
    );
    expect(tasks[0]).toMatchObject({
      language: 'javascript',
      entryPoint: 'f',
      split: 'test',
      tests: [{ kind: 'call', fn: 'f', args: [2], expected: 4 }],
    });
    expect(tasks[1]).toMatchObject({ starterCode: '# read a line', tests: [{ kind: 'stdio', stdin: 'hi\n', stdout: 'hi\n' }] });
    expect(splitCodeTasks(tasks, undefined)).toMatchObject({ train: [{ prompt: 'Echo.' }], test: [{ prompt: 'Double it.' }] });
  });

  test.each([
    ['no tests', jsonl({ prompt: 'p' }, { prompt: 'q' }), 'line 1: missing tests', 'tests'],
    [
      'an empty test list',
      jsonl({ prompt: 'p', tests: ['assert 1'] }, { prompt: 'q', test_list: [] }),
      'line 2: "test_list" is empty',
      'test_list',
    ],
    ['no prompt', jsonl({ tests: ['assert True'] }), 'line 1: missing the prompt', 'prompt'],
    ['an unknown language', jsonl({ prompt: 'p', tests: ['x'], language: 'cobol' }), 'line 1: unknown language "cobol"', 'language'],
    [
      'inputs without outputs',
      jsonl({ prompt: 'p', tests: { inputs: ['1'], outputs: [] } }),
      'line 1: "tests" has 1 inputs but 0 outputs',
      'tests',
    ],
    [
      'a HumanEval test without entry_point',
      jsonl({ prompt: 'p', test: 'def check(c): pass' }),
      'line 1: a HumanEval "test" needs "entry_point"',
      'entry_point',
    ],
    ['broken JSON', '{"prompt": "p", ', 'line 1: invalid JSON', undefined],
  ])('%s is DATASET_INVALID naming the file, line and field', async (_label, content, message, field) => {
    const target = file('bad.jsonl', content);
    const error = await loadCodeDataset(target).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DrmasError);
    expect(error).toMatchObject({ code: 'DATASET_INVALID', file: target, key: field, message: expect.stringContaining(message) });
  });

  test('a missing file and an empty file are DATASET_INVALID', async () => {
    await expect(loadCodeDataset(scratch.path('absent.jsonl'))).rejects.toMatchObject({
      code: 'DATASET_INVALID',
      message: expect.stringContaining('ENOENT'),
    });
    await expect(loadCodeDataset(file('empty.jsonl', '\n'))).rejects.toMatchObject({
      code: 'DATASET_INVALID',
      message: 'the dataset contains no records',
    });
  });
});
