import { describe, expect, test } from '@jest/globals';
import { syntheticCodeTasks, type CodeTask } from '@drmas/plugin-env-code';
import { codeTeacher } from '../src/buildBase.js';

describe('the code teacher', () => {
  const tasks = new Map<string, CodeTask>(
    syntheticCodeTasks({ seed: 0, languages: ['javascript'], trainSize: 50, testSize: 0 }).train.map((t) => [t.prompt, t]),
  );
  const teacher = codeTeacher(tasks);

  test("answers a task's prompt with its reference one-liner inside <code>", () => {
    const [prompt, task] = [...tasks.entries()].find(([p]) => p.includes('returns x plus'))!;
    const c = /returns x plus (\d+)/.exec(prompt)![1];
    expect(teacher(`<|im_start|>user\nCode: ${prompt}\n<|im_end|>`)).toBe(`<code>function f(x) { return x + ${c}; }</code>`);
    expect(task.solution).toBe(`function f(x) { return x + ${c}; }`);
  });

  test('an unknown task gets no code', () => {
    expect(teacher('Code: Write a poem.\n')).toBe('I cannot read the task.');
  });
});
