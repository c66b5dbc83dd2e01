import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { BackendFactory, candidatePackageNames, createKernel, DrmasError, type Kernel, type ResolveConfigOptions } from '@drmas/core';
import { TempProject } from '../../test/support/tempProject.js';

const plugin = (name: string, body = '') => `export default { name: ${JSON.stringify(name)}, apply(kernel) { ${body} } };\n`;
const factory = (name: string) => `export default (options) => ({ name: ${JSON.stringify(name)}, options, apply() {} });\n`;
const preset = (name: string, plugins: unknown[] = [], presets: unknown[] = [], config = {}) =>
  `export default { name: ${JSON.stringify(name)}, plugins: ${JSON.stringify(plugins)}, presets: ${JSON.stringify(presets)}, config: ${JSON.stringify(config)} };\n`;

let project: TempProject;

beforeAll(() => {
  project = new TempProject('resolution')
    .package('@drmas/plugin-search', plugin('search'))
    .package('@drmas/preset-search', preset('search', ['search'], [], { trainer: { steps: 7 } }))
    .package('drmas-plugin-foo', factory('foo'))
    .package('@acme/drmas-plugin-x', plugin('acme-x'))
    .package('@acme/drmas-preset-bundle', preset('bundle', ['foo'], ['search'], { trainer: { seed: 5 } }))
    .package('drmas-plugin-not-a-plugin', 'export default { hello: 1 };\n')
    .package(
      'drmas-plugin-register-only',
      "import { BackendFactory } from '@drmas/core';\nexport default { name: 'register-only', register(ctx) { ctx.provide(BackendFactory, 'ro', { kind: 'ro' }); } };\n",
    )
    .package('drmas-plugin-name-only', `export default { name: 'name-only', configPaths: [] };\n`)
    .package('drmas-plugin-apply-not-a-function', `export default { name: 'apply-not-a-function', register() {}, apply: 'yes' };\n`)
    .package('drmas-plugin-preset-shaped', preset('oops', ['foo']))
    .package('drmas-plugin-broken', 'export default {{ syntax error\n')
    .package(
      'drmas-plugin-throws-register',
      `export default { name: 'throws-register', register() { throw new Error('boom in register'); }, apply() {} };\n`,
    )
    .package('drmas-plugin-throws-apply', `export default { name: 'throws-apply', apply() { throw new Error('boom in apply'); } };\n`)
    .package('drmas-plugin-throws-factory', `export default () => { throw new Error('bad options'); };\n`)
    .package('drmas-preset-loop-a', preset('loop-a', [], ['loop-b']))
    .package('drmas-preset-loop-b', preset('loop-b', [], ['loop-a']))
    .package('drmas-preset-not-a-list', `export default { name: 'not-a-list', plugins: 'foo' };\n`)
    .package(
      'drmas-preset-optional',
      `export default { name: 'optional', plugins: ['search'], optionalPlugins: ${JSON.stringify([
        { name: 'ghost-engine', provides: { 'models.<id>.backend': ['ghost'] } },
        { name: 'foo', provides: { 'models.<id>.backend': ['foo'] } },
      ])} };\n`,
    )
    .write({
      'local/my-plugin.js': plugin('local'),
      'commonjs-scope/package.json': '{ "name": "commonjs-scope", "type": "commonjs" }\n',
      'commonjs-scope/plugin.js':
        "import { z } from '@drmas/core';\nexport default { name: 'esm', configSchema: { esm: z.object({}) }, apply() {} };\n",
      'commonjs-scope/export-only.js': plugin('export-only'),
      'ts/typed.ts':
        "import type { Plugin } from '@drmas/core';\ninterface Depth { depth: number }\nconst depth: Depth = { depth: 2 };\nconst typed: Plugin<Depth> = { name: 'typed', options: depth, apply() {} };\nexport default typed;\n",
      'ts/preset.mts':
        "import type { Preset } from '@drmas/core';\nexport default { name: 'ts-preset', plugins: ['./typed'], config: { trainer: { steps: 6 } } } satisfies Preset;\n",
      'ts/type-error.ts': "const name: number = 'type-error';\nexport default { name, apply(): void {} };\n",
      'ts/syntax.ts': "export default { name: 'syntax',\n  apply() { const a = ; },\n};\n",
      'ts/definite-field.ts':
        "const mark = (target: object, key: string): void => {};\nclass Agent { @mark name!: string; }\nexport default { name: 'definite-field', apply() { return new Agent(); } };\n",
      'ts/throws.ts':
        "const key: string | undefined = undefined;\nif (!key) throw new Error('ACME_KEY is not set');\nexport default { name: 'throws', apply() {} };\n",
    });
});

afterAll(() => project.dispose());

async function load(config: ResolveConfigOptions['inline']) {
  return createKernel({ cwd: project.dir, inline: config });
}

async function failure(config: ResolveConfigOptions['inline']): Promise<DrmasError> {
  try {
    await load(config);
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error('expected the config to fail');
}

describe('name normalization', () => {
  test.each([
    ['search', 'plugin', ['@drmas/plugin-search', 'drmas-plugin-search', 'search']],
    ['search', 'preset', ['@drmas/preset-search', 'drmas-preset-search', 'search']],
    ['@drmas/search', 'plugin', ['@drmas/plugin-search', '@drmas/search']],
    ['@drmas/plugin-search', 'plugin', ['@drmas/plugin-search']],
    ['@acme/x', 'plugin', ['@acme/drmas-plugin-x', '@acme/x']],
    ['@acme/x', 'preset', ['@acme/drmas-preset-x', '@acme/x']],
    ['@acme', 'plugin', ['@acme/drmas-plugin', '@acme']],
    ['drmas-plugin-foo', 'plugin', ['drmas-plugin-foo']],
  ] as const)('%s as a %s', (name, kind, expected) => {
    expect(candidatePackageNames(name, kind)).toEqual(expected);
  });
});

/** The plugins the config brought (the kernel adds its own `drmas:` built-ins first). */
function userPlugins(kernel: Kernel) {
  return kernel.plugins.filter((p) => !p.plugin.name.startsWith('drmas:'));
}

describe('loading', () => {
  test('shorthands, scoped shorthands, full names, paths and [name, options] all load', async () => {
    const { kernel } = await load({ plugins: ['search', '@acme/x', ['drmas-plugin-foo', { depth: 2 }], './local/my-plugin.js'] });
    expect(userPlugins(kernel).map((p) => [p.plugin.name, p.packageName ?? null])).toEqual([
      ['search', '@drmas/plugin-search'],
      ['acme-x', '@acme/drmas-plugin-x'],
      ['foo', 'drmas-plugin-foo'],
      ['local', null],
    ]);
    expect(userPlugins(kernel)[2]!.plugin.options).toEqual({ depth: 2 });
    expect(userPlugins(kernel)[0]!.version).toBe('1.2.3');
  });

  test('presets expand depth-first; user config wins over preset defaults', async () => {
    const { kernel, config, presets } = await load({ presets: ['@acme/bundle'], trainer: { seed: 9 } });
    expect(presets.map((p) => p.preset.name)).toEqual(['search', 'bundle']);
    expect(userPlugins(kernel).map((p) => p.plugin.name)).toEqual(['search', 'foo']);
    expect(config.trainer.steps).toBe(7);
    expect(config.trainer.seed).toBe(9);
  });
});

describe('a plugin with register and no apply', () => {
  test('loads, and what it registered resolves by name', async () => {
    const { kernel } = await load({ plugins: ['register-only'] });
    expect(userPlugins(kernel).map((p) => p.plugin.name)).toEqual(['register-only']);
    expect(kernel.getNamed(BackendFactory, 'ro', 'models.policy.backend')).toEqual({ kind: 'ro' });
  });
});

describe('TypeScript plugins and presets', () => {
  test('a .ts plugin by path, with or without its extension, and a .mts preset listing one', async () => {
    const { kernel, presets, config } = await load({ presets: ['./ts/preset.mts'], plugins: [['./ts/type-error.ts']] });
    expect(presets.map((p) => [p.preset.name, p.resolvedFrom])).toEqual([['ts-preset', project.path('ts', 'preset.mts')]]);
    expect(userPlugins(kernel).map((p) => [p.plugin.name, p.resolvedFrom])).toEqual([
      ['typed', project.path('ts', 'typed.ts')],
      ['type-error', project.path('ts', 'type-error.ts')],
    ]);
    expect(userPlugins(kernel)[0]!.plugin.options).toEqual({ depth: 2 });
    expect(config.trainer.steps).toBe(6);
  });

  test('a syntax error names the file, line and column, and shows the line', async () => {
    const error = await failure({ plugins: ['./ts/syntax.ts'] });
    expect(error.code).toBe('PLUGIN_LOAD_FAILED');
    expect(error.key).toBe('plugins[0]');
    expect(error.message).toBe(
      [
        `plugin "./ts/syntax.ts" was found at ${project.path('ts', 'syntax.ts')} but failed to load: syntax error at line 2, column 23: Unexpected token`,
        '  2 |   apply() { const a = ; },',
        '    |                       ^',
      ].join('\n'),
    );
    expect(error.hint).toContain('only syntax stops a file from loading');
  });

  test('TypeScript that tsc accepts but Babel cannot transpile names the file and the construct', async () => {
    const error = await failure({ plugins: ['./ts/definite-field.ts'] });
    expect(error.code).toBe('PLUGIN_LOAD_FAILED');
    expect(error.message).toContain(
      `failed to load: cannot transpile ${project.path('ts', 'definite-field.ts')}: Definitely assigned fields cannot be initialized here`,
    );
    expect(error.hint).toContain('compile the file with tsc');
  });

  test('a throw while the module is evaluated names the error and where', async () => {
    const error = await failure({ plugins: ['./ts/throws.ts'] });
    expect(error.code).toBe('PLUGIN_LOAD_FAILED');
    expect(error.message).toContain(
      `failed to load: it threw while being evaluated: Error: ACME_KEY is not set (${project.path('ts', 'throws.ts')}:2:`,
    );
  });
});

describe('one message per failure', () => {
  test('not found: lists what was tried, with a "Did you mean"', async () => {
    const error = await failure({ plugins: ['serch'] });
    expect(error.code).toBe('PLUGIN_NOT_FOUND');
    expect(error.key).toBe('plugins[0]');
    expect(error.message).toContain('"@drmas/plugin-serch", "drmas-plugin-serch", "serch"');
    expect(error.hint).toContain('Did you mean "search"?');
  });

  test("not found and nothing near: the install hint names drmas's own package first, then a community one", async () => {
    const error = await failure({ presets: ['quantum'] });
    expect(error.code).toBe('PRESET_NOT_FOUND');
    expect(error.hint).toBe(
      'install it (npm install @drmas/preset-quantum, or drmas-preset-quantum for a community preset) or give a path starting with ./',
    );
  });

  test('a preset passed as a plugin', async () => {
    const error = await failure({ plugins: ['@acme/bundle'] });
    expect(error.code).toBe('PLUGIN_NOT_FOUND');
    expect(error.hint).toMatch(/Did you pass a preset as a plugin\? "@acme\/bundle" is the preset @acme\/drmas-preset-bundle/);
  });

  test('a plugin passed as a preset', async () => {
    const error = await failure({ presets: ['foo'] });
    expect(error.code).toBe('PRESET_NOT_FOUND');
    expect(error.hint).toContain('Did you pass a plugin as a preset?');
  });

  test('found but not a plugin: names the module and the export shape', async () => {
    const error = await failure({ plugins: ['not-a-plugin'] });
    expect(error.code).toBe('PLUGIN_INVALID');
    expect(error.message).toContain(
      'drmas-plugin-not-a-plugin/index.js is not a drmas plugin: its default export is an object with keys ["hello"]',
    );
    expect(error.hint).toContain('{ name, register?(ctx), apply?(kernel) } (one of the two at least)');
  });

  test('a named object with neither register nor apply is not a plugin', async () => {
    const error = await failure({ plugins: ['name-only'] });
    expect(error.code).toBe('PLUGIN_INVALID');
    expect(error.message).toContain('its default export is an object with keys ["name","configPaths"]');
    expect(error.hint).toContain('(one of the two at least)');
  });

  test('an apply that is not a function is named, even beside a register', async () => {
    const error = await failure({ plugins: ['apply-not-a-function'] });
    expect(error.code).toBe('PLUGIN_INVALID');
    expect(error.key).toBe('plugins[0]');
    expect(error.hint).toBe('its `apply` is a string; make it a function or leave it out');
  });

  test('a module exporting a preset, listed as a plugin', async () => {
    const error = await failure({ plugins: ['preset-shaped'] });
    expect(error.code).toBe('PLUGIN_INVALID');
    expect(error.hint).toContain('list it under `presets`');
  });

  test.each(['plugin.js', 'export-only.js'])(
    'an ES module (%s) under a package.json without "type": "module" says which package.json, and what to change',
    async (file) => {
      const error = await failure({ plugins: [`./commonjs-scope/${file}`] });
      expect(error.code).toBe('PLUGIN_LOAD_FAILED');
      expect(error.message).toContain(
        `${project.path('commonjs-scope', file)} but failed to load: it is written as an ES module (import/export), but Node loads it as CommonJS: ` +
          `${project.path('commonjs-scope', 'package.json')} does not say "type": "module"`,
      );
      expect(error.hint).toBe(`rename the file to .mjs, or add "type": "module" to ${project.path('commonjs-scope', 'package.json')}`);
    },
  );

  test('a module that fails to import', async () => {
    const error = await failure({ plugins: ['broken'] });
    expect(error.code).toBe('PLUGIN_LOAD_FAILED');
    expect(error.message).toContain('drmas-plugin-broken');
  });

  test.each([
    ['throws-register', 'register'],
    ['throws-apply', 'apply'],
  ])('a plugin that throws in %s names the plugin and its config key', async (name, phase) => {
    const error = await failure({ plugins: ['foo', name] });
    expect(error.code).toBe('PLUGIN_FAILED');
    expect(error.message).toContain(`plugin "${name}" threw in ${phase}(): boom in ${phase}`);
    expect(error.key).toBe('plugins[1]');
  });

  test('a factory that throws names the options', async () => {
    const error = await failure({ plugins: [['throws-factory', { bad: true }]] });
    expect(error.code).toBe('PLUGIN_FAILED');
    expect(error.message).toContain('{"bad":true}');
  });

  test('listed twice: both places named', async () => {
    const error = await failure({ presets: ['search'], plugins: ['search'] });
    expect(error.code).toBe('DUPLICATE_PLUGIN');
    expect(error.message).toContain('at presets[0] > plugins[0] (in preset search) and at plugins[0]');
  });

  test('a preset cycle', async () => {
    const error = await failure({ presets: ['loop-a'] });
    expect(error.code).toBe('PRESET_CYCLE');
    expect(error.message).toContain('includes itself');
  });

  test('a preset whose plugins is not a list', async () => {
    const error = await failure({ presets: ['not-a-list'] });
    expect(error.code).toBe('PRESET_INVALID');
    expect(error.message).toContain('preset "not-a-list": `plugins` must be a list; found a string');
    expect(error.key).toBe('presets[0]');
  });

  test('a missing path', async () => {
    const error = await failure({ plugins: ['./local/missing.js'] });
    expect(error.code).toBe('PLUGIN_NOT_FOUND');
    expect(error.message).toContain('local/missing.js');
  });

  test('a malformed spec', async () => {
    const error = await failure({ plugins: [42 as unknown as string] });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('plugins[0]');
  });
});

describe('optional plugins of a preset', () => {
  /** The error a lookup throws, which must be a DrmasError. */
  function lookupError(kernel: Kernel, name: string): DrmasError {
    try {
      kernel.getNamed(BackendFactory, name, 'models.policy.backend');
    } catch (error) {
      if (DrmasError.is(error)) return error;
      throw error;
    }
    throw new Error(`expected no backend named ${name}`);
  }

  test('an installed one loads after the listed plugins; a missing one is left out without an error', async () => {
    const { kernel } = await load({ presets: ['optional'] });
    expect(userPlugins(kernel).map((p) => [p.plugin.name, p.key])).toEqual([
      ['search', 'presets[0] > plugins[0]'],
      ['foo', 'presets[0] > optionalPlugins[1]'],
    ]);
    expect(kernel.absentPlugins.map((p) => [p.packageName, p.key, p.listedIn])).toEqual([
      ['@drmas/plugin-ghost-engine', 'presets[0] > optionalPlugins[0]', 'preset optional'],
    ]);
  });

  test('naming what a missing one provides says what to install, at the key that named it', async () => {
    const { kernel } = await load({ presets: ['optional'] });
    const error = lookupError(kernel, 'ghost');
    expect([error.code, error.key, error.hint]).toEqual(['PLUGIN_NOT_FOUND', 'models.policy.backend', 'npm i @drmas/plugin-ghost-engine']);
    expect(error.message).toBe(
      'models.policy.backend is "ghost", which comes with @drmas/plugin-ghost-engine; it is not installed ' +
        '(preset optional loads it where it is)',
    );
    expect(kernel.absentProviders(BackendFactory).map((p) => p.request)).toEqual(['ghost-engine']);
    // A name nothing provides is still an unknown name.
    expect(lookupError(kernel, 'phantom').code).toBe('UNKNOWN_NAME');
  });
});
