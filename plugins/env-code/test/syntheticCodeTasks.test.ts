import { afterAll, describe, expect, test } from '@jest/globals';
import { QuickJsSandbox, syntheticCodeTasks, type CodeTask } from '../src/index.js';

/**
 * The value a task's prompt asks for, read from the prompt's words alone: an oracle independent of the templates
 * (which compute the tests' expected values) and of the reference solutions (which the sandbox runs).
 */
function promptOracle(prompt: string, args: readonly unknown[]): unknown {
  const d = /that returns (.*)\.$/.exec(prompt)![1]!;
  const [x, b] = args as [number, number];
  const n = (re: RegExp) => re.exec(d)?.slice(1).map(Number);
  let m: number[] | undefined;
  if ((m = n(/^x times (\d+) plus (\d+)$/))) return x * m[0]! + m[1]!;
  if ((m = n(/^x plus (\d+)$/))) return x + m[0]!;
  if ((m = n(/^x minus (\d+)$/))) return x - m[0]!;
  if ((m = n(/^x times (\d+)$/))) return x * m[0]!;
  if ((m = n(/^a plus b plus (\d+)$/))) return x + b + m[0]!;
  if ((m = n(/^a times (\d+) minus b$/))) return x * m[0]! - b;
  if ((m = n(/^the larger of x and (-?\d+)$/))) return x > m[0]! ? x : m[0];
  if ((m = n(/^the smaller of x and (-?\d+)$/))) return x < m[0]! ? x : m[0];
  if ((m = n(/^the remainder of x divided by (\d+)$/))) return x - Math.floor(x / m[0]!) * m[0]!;
  if ((m = n(/^1 if x is greater than (-?\d+), else 0$/))) return x > m[0]! ? 1 : 0;
  if ((m = n(/^x squared plus (\d+)$/))) return x * x + m[0]!;
  if ((m = n(/^the string s repeated (\d+) times$/))) return Array.from({ length: m[0]! }, () => args[0]).join('');
  throw new Error(`no oracle for: ${d}`);
}

describe('synthetic code tasks', () => {
  const { train, test: held } = syntheticCodeTasks({ seed: 0, languages: ['javascript', 'python'], trainSize: 400, testSize: 48 });

  test('are a pure function of the options', () => {
    expect(syntheticCodeTasks({ seed: 0, languages: ['javascript', 'python'], trainSize: 400, testSize: 48 })).toEqual({
      train,
      test: held,
    });
    const other = syntheticCodeTasks({ seed: 1, languages: ['javascript', 'python'], trainSize: 400, testSize: 48 });
    expect(other.train.map((t) => t.prompt)).not.toEqual(train.map((t) => t.prompt));
  });

  test('the held-out functions are distinct and never trained on, under any seed', () => {
    const heldPrompts = new Set(held.map((t) => t.prompt));
    expect(heldPrompts.size).toBe(48);
    for (const seed of [0, 1, 2]) {
      const { train: seedTrain } = syntheticCodeTasks({ seed, languages: ['javascript', 'python'], trainSize: 400, testSize: 0 });
      expect(seedTrain.filter((t) => heldPrompts.has(t.prompt))).toEqual([]);
    }
  });

  test("every test's expected value is what the prompt's words ask for", () => {
    for (const task of [...train, ...held]) {
      expect(task.tests.length).toBe(4);
      for (const t of task.tests)
        if (t.kind === 'call') expect([task.prompt, t.expected]).toEqual([task.prompt, promptOracle(task.prompt, t.args)]);
    }
  });

  test('both languages are drawn, with one-line reference solutions', () => {
    const languages = new Set(train.map((t) => t.language));
    expect(languages).toEqual(new Set(['javascript', 'python']));
    const js = train.find((t) => t.language === 'javascript')!;
    expect(js.solution).toMatch(/^function f\([a-z, ]+\) \{ return .+; \}$/);
  });

  test('too large a held-out list is LIMIT_EXCEEDED on env.testSize', () => {
    expect(() => syntheticCodeTasks({ seed: 0, languages: ['javascript'], trainSize: 1, testSize: 300 })).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', key: 'env.testSize' }),
    );
  });
});

describe('synthetic reference solutions', () => {
  const sandbox = new QuickJsSandbox();
  afterAll(() => sandbox.dispose());

  test('pass all their tests in the JavaScript sandbox', async () => {
    const tasks: CodeTask[] = syntheticCodeTasks({ seed: 3, languages: ['javascript'], trainSize: 60, testSize: 20 }).train;
    for (const task of tasks) {
      const run = await sandbox.run({ language: 'javascript', code: task.solution!, tests: task.tests });
      expect([task.prompt, run.tests.filter((t) => !t.passed)]).toEqual([task.prompt, []]);
    }
  });
});
