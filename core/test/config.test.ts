import { afterEach, describe, expect, test } from '@jest/globals';
import { coerceOverride, createKernel, DrmasError, parseOverride, resolveConfig, SeededRng, z } from '@drmas/core';
import { buildConfigSchema } from '../src/config/configSchema.js';
import { TempProject } from '../../test/support/tempProject.js';

const projects: TempProject[] = [];
function project(files: Record<string, string | object>): TempProject {
  const p = new TempProject('config').write(files);
  projects.push(p);
  return p;
}
afterEach(() => {
  while (projects.length) projects.pop()!.dispose();
});

async function failure(run: () => Promise<unknown>): Promise<DrmasError> {
  try {
    await run();
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a DrmasError');
}

describe('finding and loading config files', () => {
  test.each([
    ['drmas.config.json', JSON.stringify({ trainer: { steps: 4 } })],
    ['drmas.config.yaml', 'trainer:\n  steps: 4\n'],
    ['.drmasrc', 'trainer:\n  steps: 4\n'],
    ['.drmasrc.json', JSON.stringify({ trainer: { steps: 4 } })],
    ['drmas.config.mjs', 'export default { trainer: { steps: 4 } };\n'],
    ['package.json', JSON.stringify({ name: 'x', drmas: { trainer: { steps: 4 } } })],
    [
      'drmas.config.ts',
      "import { defineConfig } from '@drmas/core';\nconst steps: number = 4;\nexport default defineConfig({ trainer: { steps } });\n",
    ],
  ])('%s is found by search and loaded', async (name, content) => {
    const p = project({ [name]: content, 'sub/dir/.keep': '' });
    const { config, file } = await resolveConfig({ cwd: p.path('sub', 'dir') });
    expect(file).toBe(p.path(name));
    expect(config.trainer.steps).toBe(4);
  });

  test('--config loads one file', async () => {
    const p = project({ 'a.yaml': 'trainer:\n  seed: 3\n', 'drmas.config.json': '{"trainer":{"seed":1}}' });
    const { config } = await resolveConfig({ cwd: p.dir, configPath: 'a.yaml' });
    expect(config.trainer.seed).toBe(3);
  });

  test('a missing file names the path', async () => {
    const p = project({});
    const error = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'missing.json' }));
    expect(error.code).toBe('CONFIG_NOT_FOUND');
    expect(error.file).toBe(p.path('missing.json'));
  });

  test('a missing file suggests the config files beside it with the closest names', async () => {
    const p = project({ 'grpo-small.yaml': '{}', 'grpo-mall.json': '{}', 'grpo-smalls.txt': '', 'unrelated.json': '{}' });
    // One edit from grpo-small, two from grpo-mall; grpo-smalls.txt is as close but not a config file.
    const near = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'grpo-smal.yaml' }));
    expect(near.code).toBe('CONFIG_NOT_FOUND');
    expect(near.message).toContain('does not exist. Did you mean "grpo-small.yaml" or "grpo-mall.json"?');
    // Compared without extensions: the other extension's file of the same name is the one meant.
    const otherExtension = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'unrelated.yml' }));
    expect(otherExtension.message).toContain('Did you mean "unrelated.json"?');
    const far = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'zzzzzzzz.json' }));
    expect(far.message).not.toContain('Did you mean');
    const noFolder = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'nowhere/a.json' }));
    expect(noFolder.hint).toContain(`the folder ${p.path('nowhere')} does not exist`);
  });

  test('no config found while one is required', async () => {
    const p = project({ '.keep': '' });
    const error = await failure(() => resolveConfig({ cwd: p.dir, required: true, configPath: undefined }));
    expect(['CONFIG_NOT_FOUND']).toContain(error.code);
  });

  test('a YAML syntax error names the file, line and column', async () => {
    const p = project({ 'drmas.config.yaml': 'trainer:\n  steps: 4\n  seed: [1, 2\n  other: 1\n' });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_LOAD_FAILED');
    expect(error.file).toBe(p.path('drmas.config.yaml'));
    expect(error.message).toMatch(/invalid YAML at line 4, column 3: .*end with a \]/);
  });

  test('a JSON syntax error names the file and the line', async () => {
    const p = project({ 'drmas.config.json': '{\n  "trainer": { "steps": 4, }\n}\n' });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_LOAD_FAILED');
    expect(error.message).toMatch(/invalid JSON at line 2/);
  });

  test('a config that is not an object', async () => {
    const p = project({ 'drmas.config.json': '[1, 2]' });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('found an array');
  });
});

describe('TypeScript config files', () => {
  test.each([
    [
      'drmas.config.mts',
      "import type { UserConfig } from '@drmas/core';\nconst steps: string = 4;\nexport default { trainer: { steps } } satisfies UserConfig;\n",
    ],
    [
      'drmas.config.cts',
      "import type { UserConfig } from '@drmas/core';\nconst config: UserConfig = { trainer: { steps: 4 } };\nexport = config;\n",
    ],
  ])('%s is found by search; its types are erased, not checked', async (name, content) => {
    const p = project({ [name]: content });
    const { config, file } = await resolveConfig({ cwd: p.dir });
    expect(file).toBe(p.path(name));
    expect(config.trainer.steps).toBe(4);
  });

  test('a syntax error names the file, the line and the column, and shows the line', async () => {
    const p = project({
      'drmas.config.ts': "import { defineConfig } from '@drmas/core';\n\nexport default defineConfig({ trainer: { steps: 4, seed: } });\n",
    });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_LOAD_FAILED');
    expect(error.file).toBe(p.path('drmas.config.ts'));
    expect(error.message).toBe(
      [
        'cannot load config: syntax error at line 3, column 58: Unexpected token',
        '  3 | export default defineConfig({ trainer: { steps: 4, seed: } });',
        '    |                                                          ^',
      ].join('\n'),
    );
  });

  test('a syntax error in a file the config imports names that file', async () => {
    const p = project({
      'configs/run.config.ts': "import { trainer } from './parts/trainer.js';\nexport default { trainer };\n",
      'configs/parts/trainer.ts': 'export const trainer = {\n  steps: 4\n  seed: 1,\n};\n',
    });
    const error = await failure(() => resolveConfig({ cwd: p.dir, configPath: 'configs/run.config.ts' }));
    expect(error.code).toBe('CONFIG_LOAD_FAILED');
    expect(error.file).toBe(p.path('configs', 'run.config.ts'));
    expect(error.message).toContain(
      `syntax error in ${p.path('configs', 'parts', 'trainer.ts')} at line 3, column 3: Unexpected token, expected ","`,
    );
  });

  test('a throw while the config is evaluated names the error and where', async () => {
    const p = project({
      'drmas.config.ts':
        "const home: string | undefined = undefined;\nif (!home) throw new RangeError('DRMAS_HOME is not set');\nexport default {};\n",
    });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_LOAD_FAILED');
    expect(error.message).toContain(
      `cannot load config: it threw while being evaluated: RangeError: DRMAS_HOME is not set (${p.path('drmas.config.ts')}:2:`,
    );
  });
});

describe('schema validation', () => {
  test('a wrong type names the key path and the file', async () => {
    const p = project({ 'drmas.config.json': JSON.stringify({ trainer: { steps: 'ten' } }) });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('trainer.steps');
    expect(error.file).toBe(p.path('drmas.config.json'));
    expect(error.message).toContain('trainer.steps: expected number, received string');
  });

  test('an unknown key gets a suggestion', async () => {
    const p = project({ 'drmas.config.json': JSON.stringify({ trainer: { stpes: 3 } }) });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.key).toBe('trainer.stpes');
    expect(error.message).toContain('trainer.stpes: unknown key. Did you mean "steps"?');
  });

  test('an unknown top-level section gets a suggestion', async () => {
    const p = project({ 'drmas.config.json': JSON.stringify({ trainr: { steps: 3 } }) });
    const error = await failure(() => resolveConfig({ cwd: p.dir }));
    expect(error.message).toContain('trainr: unknown key. Did you mean "trainer"?');
  });

  test('defaults are filled in', async () => {
    const { config } = await resolveConfig({ cwd: '/', inline: {} });
    expect(config.trainer).toEqual({ steps: 1, seed: 0, outputDir: 'runs', saveEvery: 0, keepLast: 3 });
    expect(config.eval).toEqual({ every: 0, atEnd: true, atStart: false });
    expect(config.env).toEqual({ seed: 0 });
  });

  test('the kernel owns the env keys every environment shares; an environment plugin may not declare them again', async () => {
    const { config } = await resolveConfig({ cwd: '/', inline: { env: { name: 'math', maxRounds: 2, testFraction: 0.25 } } });
    expect(config.env).toEqual({ name: 'math', seed: 0, maxRounds: 2, testFraction: 0.25 });
    const error = await failure(() => resolveConfig({ cwd: '/', inline: { env: { testFractoin: 0.1 } } }));
    expect(error.message).toContain('env.testFractoin: unknown key. Did you mean "testFraction"?');
    const claimsSeed = { plugin: 'env-x', sections: { env: z.object({ seed: z.number() }) } };
    expect(() => buildConfigSchema([claimsSeed])).toThrow('config key env.seed is declared by both the kernel and plugin "env-x"');
  });

  describe('a renamed key (env.maxSteps, now env.maxRounds)', () => {
    const warning = (source: string) =>
      `${source}: env.maxSteps is deprecated since 0.2.0 and read as env.maxRounds; write env.maxRounds instead`;

    test('in a config file: read as the new key, with one warning naming the file and both keys', async () => {
      const p = project({ 'drmas.config.json': JSON.stringify({ env: { maxSteps: 3 } }) });
      const warnings: string[] = [];
      const { config } = await resolveConfig({ cwd: p.dir, warn: (m) => warnings.push(m) });
      expect(config.env).toEqual({ seed: 0, maxRounds: 3 });
      expect(warnings).toEqual([warning(p.path('drmas.config.json'))]);
    });

    test('in --set: read as the new key, the warning names the --set text', async () => {
      const p = project({ 'drmas.config.json': JSON.stringify({ env: { maxRounds: 2 } }) });
      const warnings: string[] = [];
      const { config } = await resolveConfig({ cwd: p.dir, overrides: ['env.maxSteps=4'], warn: (m) => warnings.push(m) });
      expect(config.env.maxRounds).toBe(4);
      expect(warnings).toEqual([warning('--set env.maxSteps=4')]);
    });

    test("in a preset: its value, under the new name, is the default the user's file overrides", async () => {
      const p = project({
        'old-preset.mjs': "export default { name: 'old-preset', config: { env: { maxSteps: 5, testFraction: 0.5 } } };\n",
        'drmas.config.json': JSON.stringify({ presets: ['./old-preset.mjs'], env: { maxRounds: 2 } }),
      });
      const warnings: string[] = [];
      const { config } = await resolveConfig({ cwd: p.dir, warn: (m) => warnings.push(m) });
      expect(config.env).toEqual({ seed: 0, maxRounds: 2, testFraction: 0.5 });
      expect(warnings).toEqual([warning('preset old-preset')]);
    });

    test('both names in one file, or both in --set: an error naming the file (or --set) and the keys', async () => {
      const p = project({ 'drmas.config.json': JSON.stringify({ env: { maxSteps: 3, maxRounds: 3 } }) });
      const error = await failure(() => resolveConfig({ cwd: p.dir, warn: () => {} }));
      expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'env.maxSteps', file: p.path('drmas.config.json') });
      expect(error.message).toBe('env.maxSteps and env.maxRounds are both set; env.maxSteps is the old name of env.maxRounds');
      expect(error.hint).toBe('keep env.maxRounds and remove env.maxSteps');
      const both = await failure(() =>
        resolveConfig({ cwd: '/', inline: {}, overrides: ['env.maxRounds=2', 'env.maxSteps=3'], warn: () => {} }),
      );
      expect(both).toMatchObject({ code: 'CONFIG_OVERRIDE_INVALID', key: 'env.maxSteps', file: '--set env.maxSteps=3' });
    });
  });

  test("plugins declare their own sections and extend the kernel's", async () => {
    const plugin = {
      name: 'declares',
      configSchema: { widget: z.object({ size: z.number().default(2) }), algorithm: z.object({ clipRatio: z.number().default(0.2) }) },
      apply() {},
    };
    const { config } = await resolveConfig({ cwd: '/', inline: { plugins: [plugin], algorithm: { advantage: 'grpo' } } });
    expect(config.widget).toEqual({ size: 2 });
    expect(config.algorithm).toEqual({ advantage: 'grpo', clipRatio: 0.2 });
    const error = await failure(() => resolveConfig({ cwd: '/', inline: { plugins: [plugin], widget: { sise: 1 } } }));
    expect(error.message).toContain('widget.sise: unknown key. Did you mean "size"?');
  });

  test('a near miss of an allowed value names the value, in a file and from --set; a far miss lists them all', async () => {
    const plugin = {
      name: 'declares',
      configSchema: { widget: z.object({ shape: z.enum(['round', 'square']).default('round') }) },
      apply() {},
    };
    const near = await failure(() => resolveConfig({ cwd: '/', inline: { plugins: [plugin], widget: { shape: 'sqaure' } } }));
    expect(near.message).toBe('widget.shape: Invalid option: expected one of "round"|"square"; got "sqaure". Did you mean "square"?');
    expect(near.hint).toBe('Did you mean "square"?');
    const far = await failure(() => resolveConfig({ cwd: '/', inline: { plugins: [plugin], widget: { shape: 'hexagonal' } } }));
    expect(far.message).toBe('widget.shape: Invalid option: expected one of "round"|"square"; got "hexagonal"');
    expect(far.hint).toBe('use one of: round, square');
    const set = await failure(() => resolveConfig({ cwd: '/', inline: { plugins: [plugin] }, overrides: ['widget.shape=rund'] }));
    expect(set.message).toBe('widget.shape expects one of round, square; got "rund". Did you mean "round"?');
    expect(set.hint).toBe('write e.g. --set widget.shape=round');
  });

  test('two plugins declaring the same key is an error naming both', () => {
    const a = { plugin: 'a', sections: { algorithm: z.object({ clip: z.number() }) } };
    const b = { plugin: 'b', sections: { algorithm: z.object({ clip: z.number() }) } };
    expect(() => buildConfigSchema([a, b])).toThrow('config key algorithm.clip is declared by both plugin "a" and plugin "b"');
  });

  test('entries of models and agents are validated one by one', async () => {
    const error = await failure(() => resolveConfig({ cwd: '/', inline: { agents: { solver: { modle: 'm1' } } } }));
    expect(error.message).toContain('agents.solver.modle: unknown key. Did you mean "model"?');
  });
});

describe('paths in the config', () => {
  test('relative model paths resolve from the folder of the file that set them; names stay names', async () => {
    const p = project({
      'configs/drmas.config.json': JSON.stringify({ models: { a: { model: '../ckpt/a' }, b: { model: 'tiny' }, c: { model: './c' } } }),
    });
    const { config } = await resolveConfig({
      cwd: p.dir,
      configPath: 'configs/drmas.config.json',
      overrides: ['models.c.model=./from-cli'],
    });
    expect(config.models.a?.model).toBe(p.path('ckpt', 'a'));
    expect(config.models.b?.model).toBe('tiny');
    expect(config.models.c?.model).toBe(p.path('from-cli'));
  });

  test('a bare relative path resolves from the config file where it names something there; otherwise it stays a name', async () => {
    const p = project({
      'configs/drmas.config.json': JSON.stringify({
        models: { a: { model: 'Qwen2.5-0.5B-Instruct' }, b: { model: 'tiny' }, c: { model: 'models/Qwen3-0.6B' } },
      }),
      'configs/Qwen2.5-0.5B-Instruct/config.json': '{}',
      'configs/models/Qwen3-0.6B/config.json': '{}',
      'tiny/config.json': '{}',
    });
    // Run from another folder (the project root, where a `tiny` folder exists): the config file's folder decides.
    const { config } = await resolveConfig({ cwd: p.dir, configPath: 'configs/drmas.config.json' });
    expect(config.models.a?.model).toBe(p.path('configs', 'Qwen2.5-0.5B-Instruct'));
    expect(config.models.b?.model).toBe('tiny');
    expect(config.models.c?.model).toBe(p.path('configs', 'models', 'Qwen3-0.6B'));
  });

  test('plugins declare their own path keys', async () => {
    const plugin = { name: 'files', configSchema: { data: z.object({ file: z.string() }) }, configPaths: ['data.file'], apply() {} };
    const p = project({ 'sub/drmas.config.json': '{}' });
    const { config } = await resolveConfig({ cwd: p.dir, configPath: 'sub/drmas.config.json', inline: undefined, overrides: [] });
    expect(config.trainer.steps).toBe(1);
    const inline = await resolveConfig({ cwd: p.dir, inline: { plugins: [plugin], data: { file: './x.jsonl' } } });
    expect(inline.config.data).toEqual({ file: p.path('x.jsonl') });
  });
});

describe('--set', () => {
  test('coerces by the schema type at the key', async () => {
    const { config } = await resolveConfig({
      cwd: '/',
      inline: {},
      overrides: ['trainer.steps=3', 'trainer.outputDir=123', 'eval.atEnd=false', 'trainer.runName=a=b'],
    });
    expect(config.trainer.steps).toBe(3);
    expect(config.trainer.outputDir).toBe('123');
    expect(config.eval.atEnd).toBe(false);
    expect(config.trainer.runName).toBe('a=b');
  });

  test('guesses where no schema speaks', () => {
    const guess = (raw: string) => coerceOverride({ path: ['x'], raw, text: `x=${raw}` }, undefined);
    expect(guess('3')).toBe(3);
    expect(guess('-2.5e-3')).toBe(-0.0025);
    expect(guess('true')).toBe(true);
    expect(guess('null')).toBeNull();
    expect(guess('[1,"a"]')).toEqual([1, 'a']);
    expect(guess('{"a":1}')).toEqual({ a: 1 });
    expect(guess('hello')).toBe('hello');
    expect(guess('1.2.3')).toBe('1.2.3');
  });

  test('guesses numbers as the previous pattern did, without its quadratic backtracking', () => {
    // The previous pattern: `\d+\.?\d*` tried every split of a digit run between its two runs before failing.
    const previous = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
    const guess = (raw: string) => coerceOverride({ path: ['x'], raw, text: `x=${raw}` }, undefined);
    const parts = ['1', '23', '.', 'e', 'E', '-', '+', 'x', ' '];
    const rng = new SeededRng(4);
    let numbers = 0;
    for (let n = 0; n < 3000; n++) {
      const raw = Array.from({ length: rng.int(8) }, () => parts[rng.int(parts.length)]).join('');
      const number = raw.trim() !== '' && previous.test(raw.trim());
      expect({ raw, number: typeof guess(raw) === 'number' }).toEqual({ raw, number });
      if (number) numbers++;
    }
    expect(numbers).toBeGreaterThan(100);
    expect(guess(`${'1'.repeat(200_000)}x`)).toBe(`${'1'.repeat(200_000)}x`);
  });

  test('wins over the file, which wins over presets', async () => {
    const p = project({ 'drmas.config.json': JSON.stringify({ trainer: { steps: 5, seed: 2 } }) });
    const { config } = await resolveConfig({ cwd: p.dir, overrides: ['trainer.steps=9'] });
    expect(config.trainer).toMatchObject({ steps: 9, seed: 2 });
  });

  test('a value of the wrong type is an error naming the key', async () => {
    const error = await failure(() => resolveConfig({ cwd: '/', inline: {}, overrides: ['trainer.steps=many'] }));
    expect(error.code).toBe('CONFIG_OVERRIDE_INVALID');
    expect(error.key).toBe('trainer.steps');
    const bool = await failure(() => resolveConfig({ cwd: '/', inline: {}, overrides: ['eval.atEnd=maybe'] }));
    expect(bool.message).toBe('eval.atEnd expects true or false; got "maybe"');
    expect(bool.file).toBe('--set eval.atEnd=maybe');
  });

  test('a malformed override', () => {
    expect(() => parseOverride('trainer.steps')).toThrow('--set expects KEY=VALUE');
    expect(() => parseOverride('a..b=1')).toThrow('--set expects KEY=VALUE');
  });

  test('an unknown key set from the command line is reported as coming from --set', async () => {
    const error = await failure(() => resolveConfig({ cwd: '/', inline: {}, overrides: ['trainer.stesp=3'] }));
    expect(error).toMatchObject({ code: 'CONFIG_OVERRIDE_INVALID', file: '--set trainer.stesp=3', key: 'trainer.stesp' });
    expect(error.message).toBe(
      'unknown key trainer.stesp; trainer has steps, seed, outputDir, runName, saveEvery, keepLast, memoryBudget. Did you mean "steps"?',
    );
  });

  test('plugins can be replaced from the command line', async () => {
    const p = project({ 'mine.js': 'export default { name: "mine", apply() {} };\n', 'drmas.config.json': '{}' });
    const { kernel } = await createKernel({ cwd: p.dir, overrides: ['plugins=["./mine.js"]'] });
    expect(kernel.plugins.map((x) => x.plugin.name)).toEqual(['drmas:advantage', 'drmas:run-directory', 'drmas:engines', 'mine']);
  });
});
