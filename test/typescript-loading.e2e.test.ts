import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runNode, type InfoReport } from './support/cliRunner.js';
import { installCore, linkPackage, runInstalledBin } from './support/installedCore.js';
import { TempProject } from './support/tempProject.js';
import { describeSlow } from './support/describeSlow.js';

/**
 * A user's project, outside the repository, with @drmas/core installed from the registry's point of view (copied
 * with its dependencies), a TypeScript config and TypeScript plugins, and whatever TypeScript the user installed:
 * 7 (the native port, whose package has no compiler API), 5, or none. No Node flags anywhere.
 */
const FILES: Record<string, string | object> = {
  'package.json': { name: 'my-drmas-project', version: '1.0.0', type: 'module', private: true },
  'drmas.config.ts': `import { defineConfig, type UserConfig } from '@drmas/core';

const steps: number = 1;
const config: UserConfig = {
  plugins: [['./toy-plugin.ts', { episodes: 4 }]],
  trainer: { steps, seed: 3 },
};

export default defineConfig(config);
`,
  'toy-plugin.ts': `import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agent, definePlugin, makeTurn, type Kernel, type RolloutBatch, type Trajectory } from '@drmas/core';

interface ToyOptions {
  episodes: number;
  source?: string;
}

@agent('planner')
class PlannerAgent {
  constructor(private readonly options: Record<string, unknown>) {}

  answer(episode: number): number {
    return episode % 2 === 0 ? 1 : 0;
  }
}

const source: string = path.basename(fileURLToPath(import.meta.url));

export default definePlugin<ToyOptions>((options) => ({
  name: 'toy',
  options: { ...options, source },
  register(ctx) {
    ctx.agents.register(PlannerAgent);
  },
  apply(kernel: Kernel) {
    kernel.hooks.rollout.tapPromise('toy', async () => {
      const planner = kernel.agents.create<PlannerAgent>('planner');
      const trajectories: Trajectory[] = [];
      for (let episode = 0; episode < options.episodes; episode++) {
        const trajectoryId = \`t\${episode}\`;
        trajectories.push({ groupId: 'g0', trajectoryId, taskId: 'toy', done: true, turns: [makeTurn({
          groupId: 'g0', trajectoryId, agentId: 'planner', round: 0, workerGroupId: 'planner', index: 0,
          promptIds: [], responseIds: [planner.answer(episode)], logProbs: [0], valid: true,
        })] });
      }
      return { trajectories, metrics: {} } satisfies RolloutBatch;
    });
    kernel.hooks.reward.tap('toy', (batch, step) => {
      for (const turn of batch.trajectories.flatMap((t) => t.turns)) turn.reward = turn.responseIds[0];
      step.metrics['toy/reward'] = batch.trajectories.filter((t) => t.turns[0].reward === 1).length / batch.trajectories.length;
      return batch;
    });
    kernel.hooks.advantage.tap('toy', (batch) => {
      for (let row = 0; row < batch.rows; row++) batch.advantages[row * batch.responseLength] = batch.rewards[row]! - 0.5;
    });
    kernel.hooks.update.tap('toy', (batch, step) => {
      step.metrics[\`toy/\${batch.workerGroupId}/rows\`] = batch.rows.length;
    });
  },
}));
`,
  'create-kernel.mjs': `import { createKernel } from '@drmas/core';

const configPath = process.argv[2];
const { kernel, file, config } = await createKernel({ cwd: process.cwd(), configPath });
console.log(JSON.stringify({
  file,
  steps: config.trainer.steps,
  plugins: kernel.plugins.map((p) => ({ name: p.plugin.name, packageName: p.packageName ?? null, resolvedFrom: p.resolvedFrom, options: p.plugin.options ?? null })),
  agents: kernel.agents.names(),
}));
`,
  'configs/alt.config.mts': `import type { UserConfig } from '@drmas/core';

export default {
  plugins: ['../plugins/counter', '../plugins/legacy.cts', '../plugins/extensionless'],
  trainer: { steps: 2 },
} satisfies UserConfig;
`,
  'plugins/counter/package.json': { name: 'drmas-plugin-counter', version: '0.0.7', type: 'module', main: 'src/index.ts' },
  'plugins/counter/src/index.ts': `import type { Plugin } from '@drmas/core';
import { COUNTER } from './name.js';

const plugin: Plugin = { name: COUNTER, apply() {} };
export default plugin;
`,
  'plugins/counter/src/name.ts': `export const COUNTER: string = 'counter';
`,
  'plugins/legacy.cts': `import type { Plugin } from '@drmas/core';

const plugin: Plugin = { name: 'legacy', apply() {} };
export = plugin;
`,
  'plugins/extensionless.ts': `enum Names { Extensionless = 'extensionless' }
export default { name: Names.Extensionless, apply(): void {} };
`,
  'broken/drmas.config.ts': `import { defineConfig } from '@drmas/core';

export default defineConfig({ trainer: { steps: 4, seed: } });
`,
};

/** The version of `typescript` each package would get from `require('typescript')`, or null. */
const TYPESCRIPT_SEEN_FROM = `
import { createRequire } from 'node:module';
const seen = {};
for (const name of ['@drmas/core', 'cosmiconfig', 'jiti']) {
  const require = createRequire(\`\${process.cwd()}/node_modules/\${name}/package.json\`);
  try { seen[name] = require(require.resolve('typescript/package.json')).version; } catch { seen[name] = null; }
}
console.log(JSON.stringify(seen));
`;

/** What create-kernel.mjs prints about the kernel it created. */
interface LoadedKernel {
  /** The config file it loaded (absent without one). */
  file?: string;
  steps: number;
  plugins: Array<{ name: string; packageName: string | null; resolvedFrom: string; options: unknown }>;
  agents: string[];
}

const INSTALLS = [
  ['TypeScript 7', 'typescript-7', /^(Version )?7\./],
  ['TypeScript 5', 'typescript', /^(Version )?5\./],
  ['no TypeScript', undefined, undefined],
] as const;

// TypeScript 7 (what `npm i -D typescript` installs today) and none in the default run, TypeScript 5 with the slow tests.
describe.each(INSTALLS.filter(([label]) => label !== 'TypeScript 5'))(
  'a project with %s installed',
  (_label, typescriptPackage, tscVersion) => loadingChecks(typescriptPackage, tscVersion),
);
describeSlow.each(INSTALLS.filter(([label]) => label === 'TypeScript 5'))(
  'a project with %s installed (slow)',
  (_label, typescriptPackage, tscVersion) => loadingChecks(typescriptPackage, tscVersion),
);

function loadingChecks(typescriptPackage: (typeof INSTALLS)[number][1], tscVersion: (typeof INSTALLS)[number][2]): void {
  let project: TempProject;
  beforeAll(() => {
    project = new TempProject('ts-loading', os.tmpdir()).write(FILES);
    installCore(project.dir);
    if (typescriptPackage) linkPackage(project.dir, 'typescript', typescriptPackage);
  });
  afterAll(() => project?.dispose());

  test('has that TypeScript (or none) for @drmas/core and the loaders it uses, and core does not bring its own', () => {
    const seen = JSON.parse(runNode(['--input-type=module', '-e', TYPESCRIPT_SEEN_FROM], project.dir).stdout) as Record<
      string,
      string | null
    >;
    expect(Object.keys(seen)).toEqual(['@drmas/core', 'cosmiconfig', 'jiti']);
    for (const version of Object.values(seen)) {
      if (tscVersion) expect(version).toMatch(tscVersion);
      else expect(version).toBeNull();
    }
    if (tscVersion) {
      expect(runNode([project.path('node_modules', 'typescript', 'bin', 'tsc'), '--version'], project.dir).stdout).toMatch(tscVersion);
    }
    const manifest = JSON.parse(readFileSync(project.path('node_modules', '@drmas', 'core', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).not.toContain('typescript');
  });

  test('`drmas info --json` loads drmas.config.ts and the TS plugin with its @agent', () => {
    const result = runInstalledBin(project.dir, ['info', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as InfoReport;
    expect(report.configFile).toBe(project.path('drmas.config.ts'));
    expect(report.plugins).toContainEqual(expect.objectContaining({ name: 'toy', resolvedFrom: project.path('toy-plugin.ts') }));
    expect(report.roles.Agent?.entries).toEqual([{ name: 'planner', plugin: 'toy' }]);
  });

  test('createKernel loads the same config and plugin', () => {
    const result = runNode(['create-kernel.mjs'], project.dir);
    expect(result.stderr).toBe('');
    const loaded = JSON.parse(result.stdout) as LoadedKernel;
    expect(loaded.file).toBe(project.path('drmas.config.ts'));
    expect(loaded.steps).toBe(1);
    expect(loaded.plugins).toContainEqual({
      name: 'toy',
      packageName: null,
      resolvedFrom: project.path('toy-plugin.ts'),
      options: { episodes: 4, source: 'toy-plugin.ts' },
    });
    expect(loaded.agents).toEqual(['planner']);
  });

  test("`drmas train` runs a step with the TS plugin's rollout", () => {
    const runDir = project.path('runs', 'one-step');
    const result = runInstalledBin(project.dir, ['train', '--run-dir', runDir]);
    expect(result.code).toBe(0);
    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ step: 1, 'toy/reward': 0.5, 'toy/planner/rows': 4 });
  });

  test('a .mts config given with --config, a package whose main is .ts, a .cts file and an extensionless path', () => {
    const result = runInstalledBin(project.dir, ['info', '--json', '--config', 'configs/alt.config.mts']);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as InfoReport;
    expect(report.configFile).toBe(project.path('configs', 'alt.config.mts'));
    expect(report.plugins.filter((p) => p.resolvedFrom.startsWith(project.dir))).toEqual([
      expect.objectContaining({
        name: 'counter',
        package: 'drmas-plugin-counter',
        version: '0.0.7',
        resolvedFrom: project.path('plugins', 'counter', 'src', 'index.ts'),
      }),
      expect.objectContaining({ name: 'legacy', resolvedFrom: project.path('plugins', 'legacy.cts') }),
      expect.objectContaining({ name: 'extensionless', resolvedFrom: project.path('plugins', 'extensionless.ts') }),
    ]);
  });

  test('a syntax error in drmas.config.ts fails naming the file and the line, with a stack only under --verbose', () => {
    const file = project.path('broken', 'drmas.config.ts');
    const result = runInstalledBin(project.dir, ['info'], project.path('broken'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error CONFIG_LOAD_FAILED (${file}): cannot load config: syntax error at line 3, column 58: Unexpected token`,
    );
    expect(result.stderr).toContain(
      [
        '  3 | export default defineConfig({ trainer: { steps: 4, seed: } });',
        '    |                                                          ^',
      ].join('\n'),
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(runInstalledBin(project.dir, ['info', '--verbose'], project.path('broken')).stderr).toMatch(/^\s+at /m);
  });
}

describe('load failures, as the drmas bin reports them (a project with no TypeScript)', () => {
  let project: TempProject;
  beforeAll(() => {
    project = new TempProject('ts-failures', os.tmpdir()).write({
      'package.json': { name: 'my-failing-project', version: '1.0.0', type: 'module', private: true },
      'plugins/missing-file.ts':
        "import { reward } from './rewards/exact.js';\nexport default { name: 'missing-file', apply(): void { reward(); } };\n",
      'plugins/missing-package.ts':
        "import { parse } from 'acme-parser';\nexport default { name: 'missing-package', apply(): void { parse(); } };\n",
      'plugins/syntax.ts': "export default {\n  name: 'syntax',\n  apply(kernel: unknown) { return kernel as; },\n};\n",
      'plugins/throws.ts':
        "const url: string = process.env.ACME_URL ?? '';\nif (!url) throw new Error('ACME_URL is not set');\nexport default { name: 'throws', apply(): void {} };\n",
      'plugins/type-error.ts':
        "const count: number = 'three';\nexport default { name: 'type-error', options: { count }, apply(): void {} };\n",
      'configs/missing-package.config.ts': "import { base } from '@acme/drmas-defaults';\nexport default { ...base };\n",
      ...Object.fromEntries(
        ['missing-file', 'missing-package', 'syntax', 'throws', 'type-error'].map((name) => [
          `configs/${name}.json`,
          { plugins: [`../plugins/${name}.ts`] },
        ]),
      ),
    });
    installCore(project.dir);
  });
  afterAll(() => project?.dispose());

  const info = (config: string) => runInstalledBin(project.dir, ['info', '--config', config]);

  test('a type error alone does not stop a plugin from loading', () => {
    const result = info('configs/type-error.json');
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`type-error  from ${project.path('plugins', 'type-error.ts')}`);
  });

  test.each([
    [
      'a plugin importing a missing file',
      'configs/missing-file.json',
      (p: TempProject) => [
        `error PLUGIN_LOAD_FAILED (${p.path('configs', 'missing-file.json')}: plugins[0]): plugin "../plugins/missing-file.ts" was found at ${p.path('plugins', 'missing-file.ts')} but failed to load: cannot find "./rewards/exact.js", imported by ${p.path('plugins', 'missing-file.ts')}`,
        '  hint: check the path: it resolves from the folder of the file that imports it',
      ],
    ],
    [
      'a plugin importing a missing package',
      'configs/missing-package.json',
      (p: TempProject) => [
        `error PLUGIN_LOAD_FAILED (${p.path('configs', 'missing-package.json')}: plugins[0]): plugin "../plugins/missing-package.ts" was found at ${p.path('plugins', 'missing-package.ts')} but failed to load: cannot find "acme-parser", imported by ${p.path('plugins', 'missing-package.ts')}`,
        '  hint: install it in the project (npm install acme-parser) or fix the import',
      ],
    ],
    [
      'a config importing a missing package',
      'configs/missing-package.config.ts',
      (p: TempProject) => [
        `error CONFIG_LOAD_FAILED (${p.path('configs', 'missing-package.config.ts')}): cannot load config: cannot find "@acme/drmas-defaults", imported by ${p.path('configs', 'missing-package.config.ts')}`,
        '  hint: install it in the project (npm install @acme/drmas-defaults) or fix the import',
      ],
    ],
    [
      'a plugin with a syntax error',
      'configs/syntax.json',
      (p: TempProject) => [
        `error PLUGIN_LOAD_FAILED (${p.path('configs', 'syntax.json')}: plugins[0]): plugin "../plugins/syntax.ts" was found at ${p.path('plugins', 'syntax.ts')} but failed to load: syntax error at line 3, column 44: Unexpected token`,
        '  3 |   apply(kernel: unknown) { return kernel as; },',
        '    |                                            ^',
        '  hint: fix the syntax there; TypeScript types are erased without being checked, so only syntax stops a file from loading',
      ],
    ],
    [
      'a plugin throwing while it is evaluated',
      'configs/throws.json',
      (p: TempProject) => [
        `error PLUGIN_LOAD_FAILED (${p.path('configs', 'throws.json')}: plugins[0]): plugin "../plugins/throws.ts" was found at ${p.path('plugins', 'throws.ts')} but failed to load: it threw while being evaluated: Error: ACME_URL is not set (${p.path('plugins', 'throws.ts')}:2:17)`,
        "  hint: the error comes from the module's own top-level code; run with --verbose for the stack trace",
      ],
    ],
  ])('%s', (_label, config, expected) => {
    const result = info(config);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${expected(project).join('\n')}\n`);
  });
});
