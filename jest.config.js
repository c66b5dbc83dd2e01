/**
 * Jest runs the TypeScript sources directly (ts-jest, ESM). Workspace packages resolve to their `src/` through
 * the `drmas-source` export condition, so a test and the plugins it loads share one copy of @drmas/core.
 * Tests that need more than a few seconds are marked with `describeSlow` and run only with DRMAS_SLOW_TESTS=1.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/**
 * The suites the default one leaves out, each run by a config of its own that reads its patterns from here (relative
 * to the repository): test/interop needs the Python systems (`npm run test:interop`, jest.interop.config.js);
 * test/reliability runs whole CLI runs by the hundred (`npm run test:reliability`, jest.reliability.config.js); the
 * end-to-end tests, a user's project and the example configs (`npm run test:e2e`, jest.e2e.config.js). .ci/run runs
 * all three.
 */
export const SEPARATE_SUITES = {
  interop: ['test/interop/**/*.test.ts'],
  reliability: ['test/reliability/**/*.test.ts'],
  e2e: ['test/*.e2e.test.ts', 'test/marl-examples.test.ts', 'test/experiment-grid.test.ts'],
};

/** A suite's `testMatch`. */
export const suiteMatch = (suite) => SEPARATE_SUITES[suite].map((pattern) => `<rootDir>/${pattern}`);

export default {
  testEnvironment: '<rootDir>/test/support/nodeEnvironment.cjs',
  testEnvironmentOptions: { customExportConditions: ['drmas-source', 'node', 'node-addons'] },
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.test.json', diagnostics: false }],
  },
  testMatch: [
    '<rootDir>/core/test/**/*.test.ts',
    '<rootDir>/models/test/**/*.test.ts',
    '<rootDir>/plugins/*/test/**/*.test.ts',
    '<rootDir>/presets/*/test/**/*.test.ts',
    '<rootDir>/test/**/*.test.ts',
    // Negations come last (jest applies the patterns in order); `<rootDir>` is not replaced after a `!`.
    ...Object.values(SEPARATE_SUITES)
      .flat()
      .map((pattern) => `!${ROOT}/${pattern}`),
  ],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60000,
  // Jest's default leaves a core to itself (one worker on 2 cores); most files wait on child processes, servers and
  // onnxruntime's own threads, so two workers on 2 cores finish the suite sooner.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  // One long-lived worker runs ~550 files: restarting it past this heap keeps the last files as fast as the first.
  workerIdleMemoryLimit: '1GB',
};
