// ESLint with typescript-eslint's type-aware rules over the TypeScript sources, tests and examples, and the plain
// rules over the JavaScript scripts and benchmarks; formatting is Prettier's, not ESLint's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '.drmas-cache/**', 'runs/**', 'coverage/**', '**/*.d.ts', 'bench/pytorch/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.eslint.json'], tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      // An implementation of a Promise-returning role is `async` so that what it throws arrives as a rejection.
      '@typescript-eslint/require-await': 'off',
      // A late-bound `let`, read by a closure made before the value exists, stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Scripts inlined into a web page run in the browser, not in Node.
    files: ['plugins/report/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // A CommonJS file (the Jest test environment) loads its dependencies with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
