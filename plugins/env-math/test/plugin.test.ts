import { afterEach, describe, expect, test } from '@jest/globals';
import { AnswerFormat, createKernel, DrmasError, Environment, QuestionSet } from '@drmas/core';
import envMathPlugin, { ArithmeticTaskSource, type MathTask } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

const projects: TempProject[] = [];
function project(files: Record<string, string | object>): TempProject {
  const p = new TempProject('env-math').write(files);
  projects.push(p);
  return p;
}
afterEach(() => {
  while (projects.length) projects.pop()!.dispose();
});

async function environmentOf(config: object, files: Record<string, string> = {}): Promise<Environment<MathTask>> {
  const p = project({ 'config/drmas.config.json': { plugins: ['env-math'], ...config }, ...files });
  const { kernel } = await createKernel({ cwd: p.dir, configPath: p.path('config', 'drmas.config.json') });
  const environment = kernel.getNamed(Environment, 'math') as Environment<MathTask>;
  await environment.init();
  return environment;
}

describe('what env-math contributes besides its environment', () => {
  test('the `math` answer format: the last \\boxed{} of the final section, equal as math', async () => {
    const { kernel } = await createKernel({ cwd: process.cwd(), inline: { plugins: [envMathPlugin()] } });
    const answers = kernel.getNamed(AnswerFormat, 'math');
    expect(answers.extract('<think>\\boxed{1}</think> so \\boxed{\\frac{1}{2}}')).toBe('\\frac{1}{2}');
    expect(answers.extract('no box')).toBeUndefined();
    expect([answers.equal('0.5', '\\frac{1}{2}'), answers.equal('4.0', '4'), answers.equal('0.33', '1/3')]).toEqual([true, true, false]);
  });

  test("the `math` question set: ArithmeticTaskSource's questions and answers for the request, held-out apart", async () => {
    const { kernel } = await createKernel({ cwd: process.cwd(), inline: { plugins: [envMathPlugin()] } });
    const request = { seed: 5, levels: [1, 2], trainSize: 300, testSize: 40 };
    const { train, test: held } = kernel.getNamed(QuestionSet, 'math').questions(request);
    const source = new ArithmeticTaskSource(request);
    const asQuestion = ({ id, question, answer }: MathTask) => ({ id, question, answer });
    expect(train).toEqual(Array.from({ length: 300 }, (_, i) => asQuestion(source.train(i))));
    expect(held).toEqual(source.test().map(asQuestion));
    const heldOut = new Set(held.map((q) => q.question));
    expect(train.filter((q) => heldOut.has(q.question))).toEqual([]);
  });
});

describe("plugins: ['env-math']", () => {
  test('provides the math environment, reading its env keys from the config', async () => {
    const environment = await environmentOf({ env: { name: 'math', seed: 5, levels: [3], testSize: 3, trainSize: 10 } });
    const source = new ArithmeticTaskSource({ seed: 5, levels: [3], testSize: 3, trainSize: 10 });
    expect(environment.batch(4, 8)).toEqual(source.batch(4, 8));
    expect(environment.test()).toEqual(source.test());
    expect(environment.maxRounds).toBe(1);
  });

  test('env.file and env.testFile are resolved from the folder of the config file that set them', async () => {
    const jsonl = (pairs: string[][]) => pairs.map(([question, answer]) => JSON.stringify({ question, answer })).join('\n');
    const environment = await environmentOf(
      { env: { name: 'math', file: './data/train.jsonl', testFile: './data/test.jsonl' } },
      {
        'config/data/train.jsonl': jsonl([
          ['What is 2+2?', '4'],
          ['What is 3+5?', '8'],
        ]),
        'config/data/test.jsonl': jsonl([['What is 9-4?', '5']]),
      },
    );
    expect(environment.test().map((t) => [t.question, t.answer, t.split])).toEqual([['What is 9-4?', '5', 'test']]);
    expect(
      environment
        .batch(0, 2)
        .tasks.map((t) => t.question)
        .sort(),
    ).toEqual(['What is 2+2?', 'What is 3+5?']);
  });

  test('rejects the keys of another environment, and a bad dataset names env.file', async () => {
    const p = project({ 'drmas.config.json': { plugins: ['env-math'], env: { name: 'math', entities: 40 } } });
    await expect(createKernel({ cwd: p.dir })).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'env.entities' });
    const missing = await environmentOf({ env: { name: 'math', file: './absent.jsonl' } }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(DrmasError);
    expect(missing).toMatchObject({ key: 'env.file' });
  });

  test('a malformed dataset line stops drmas train: exit 1, DATASET_INVALID at env.file naming the file and line, a hint, no stack', async () => {
    const p = project({
      'drmas.config.json': {
        plugins: ['env-math', './team.js'],
        env: { name: 'math', file: './data.jsonl' },
        algorithm: { advantage: 'flat' },
      },
      'data.jsonl': '{"question": "What is 2+2?", "answer": "4"}\n{"question": "What is 3+3?" "answer": "6"}\n',
      'team.js': `import { AdvantageEstimator, Environment } from '@drmas/core';
export default {
  name: 'team',
  register(ctx) { ctx.provide(AdvantageEstimator, 'flat', { name: 'flat', estimate: (b) => b }); },
  apply(kernel) {
    kernel.hooks.setup.tapPromise('team', () => kernel.getNamed(Environment, 'math').init());
    kernel.hooks.rollout.tapPromise('team', async () => ({ trajectories: [], metrics: {} }));
  },
};
`,
    });
    const { code, stderr } = await runCli(['train', '--run-dir', p.path('run')], p.dir);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `error DATASET_INVALID (${p.path('drmas.config.json')}: env.file): math environment: ${p.path('data.jsonl')}: line 2: invalid JSON (`,
    );
    expect(stderr).toContain('\n  hint: a JSONL file holds one JSON object per line; fix or remove this line\n');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
