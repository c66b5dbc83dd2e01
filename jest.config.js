/**
 * Jest runs the TypeScript sources directly (ts-jest, ESM). Workspace packages resolve to their `src/` through
 * the `drmas-source` export condition, so a test and the plugins it loads share one copy of @drmas/core.
 * Tests that need more than a few seconds are marked with `describeSlow` and run only with DRMAS_SLOW_TESTS=1.
 */
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
  ],
  // test/interop needs the Python systems: `npm run test:interop` runs it (jest.interop.config.js); test/reliability
  // runs whole CLI runs by the hundred: `npm run test:reliability` (jest.reliability.config.js); the end-to-end tests
  // (a user's project, the example configs): `npm run test:e2e` (jest.e2e.config.js). .ci/run runs all three.
  testPathIgnorePatterns: [
    '/node_modules/',
    '/dist/',
    '<rootDir>/test/interop/',
    '<rootDir>/test/reliability/',
    '<rootDir>/test/.*\\.e2e\\.test\\.ts$',
    '<rootDir>/test/marl-examples\\.test\\.ts$',
    '<rootDir>/test/experiment-grid\\.test\\.ts$',
  ],
  testTimeout: 60000,
  // One long-lived worker runs ~550 files: restarting it past this heap keeps the last files as fast as the first.
  workerIdleMemoryLimit: '1GB',
};
