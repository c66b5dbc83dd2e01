import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, TempProject } from './support/tempProject.js';
import { describeSlow } from './support/describeSlow.js';

/**
 * `defineConfig` is typed from core's sections and every section the preset's plugins add by declaration merging:
 * each key of the math preset's config checks, and a misspelt one fails `tsc` (TypeScript 5, and 7 as
 * `npm i -D typescript` installs it today), against the packages' built declarations.
 */
const project = new TempProject('typed-config').write({
  'tsconfig.json': {
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
    include: ['*.ts'],
  },
});
afterAll(() => project.dispose());

const COMPILERS: Array<[string, string]> = [
  ['TypeScript 5', path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')],
  ['TypeScript 7', path.join(REPO_ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc')],
];

/** Compiles `source` as drmas.config.ts; returns tsc's exit code and the error lines. */
function compile(tsc: string, source: string): { code: number; errors: string[] } {
  project.write({ 'drmas.config.ts': source });
  const result = spawnSync(process.execPath, [tsc, '-p', project.path('tsconfig.json')], { encoding: 'utf8', cwd: project.dir });
  return { code: result.status ?? -1, errors: `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.includes('error TS')) };
}

const WELL_TYPED = `import { defineConfig } from '@drmas/preset-math';

export default defineConfig({
  presets: ['math'],
  models: { policy: { model: 'tiny', rollout: 'onnx', provider: 'cpu', optimizer: { lr: 3e-5, schedule: 'cosine', warmupSteps: 2, paramGroups: [{ params: ['model.norm.weight'], lr: 2e-2 }] } } },
  agents: { solver: { model: 'policy', sampling: { temperature: 0.7, maxNewTokens: 56 }, train: { microBatchSize: 16 } } },
  algorithm: { advantage: 'drmas', loss: { clipRatioHigh: 0.28 }, dynamicSampling: { enabled: true } },
  orchestra: { name: 'math', maxLoops: 2 },
  env: { name: 'math', levels: [1, 2], checkSteps: true },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'drmas' },
  eval: { k: 16, atStart: true },
  trainer: { steps: 30, seed: 0, oldLogProbs: 'rollout' },
  report: { progress: 'lines' },
});
`;

// TypeScript 7 (what `npm i -D typescript` installs today) in the default run, TypeScript 5 with the slow tests.
describeSlow.each(COMPILERS.slice(0, 1))('a typed drmas.config.ts (%s, slow)', (_label, tsc) => typedConfigChecks(tsc));
describe.each(COMPILERS.slice(1))('a typed drmas.config.ts (%s)', (_label, tsc) => typedConfigChecks(tsc));

function typedConfigChecks(tsc: string): void {
  test('every section of the math preset type-checks', () => {
    const { code, errors } = compile(tsc, WELL_TYPED);
    expect(errors).toEqual([]);
    expect(code).toBe(0);
  });

  test.each([
    ['a core key', 'trainer: { stpes: 30 }', "'stpes'"],
    ['a key the trainer adds to models.<id>', "models: { policy: { model: 'tiny', optimizer: { learningRate: 1e-4 } } }", "'learningRate'"],
    ['a key the orchestra adds to agents.<role>', 'agents: { solver: { sampling: { temprature: 0.7 } } }', "'temprature'"],
    ['a section a plugin adds', 'orchestra: { maxLoop: 2 }', "'maxLoop'"],
    ['a key an environment adds to env', 'env: { levls: [1] }', "'levls'"],
    ['a section no plugin declares', "orchestr: { name: 'math' }", "'orchestr'"],
    ['a value of the wrong type', "algorithm: { loss: { aggregation: 'token_mean' } }", 'token_mean'],
  ])('%s, misspelt, fails to compile naming it', (_what, section, named) => {
    const { code, errors } = compile(
      tsc,
      `import { defineConfig } from '@drmas/preset-math';\n\nexport default defineConfig({ presets: ['math'], ${section} });\n`,
    );
    expect(code).not.toBe(0);
    expect(errors.join('\n')).toContain(named);
  });
}
