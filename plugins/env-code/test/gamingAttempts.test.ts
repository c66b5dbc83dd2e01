import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { PyodideSandbox, QuickJsSandbox, type CodeLanguage, type CodeSandbox, type CodeTest } from '../src/index.js';
import type { GamingAttempt, HonestSolution } from './gaming/attempt.js';
import {
  JS_ATTEMPTS,
  JS_FUNCTION_TESTS,
  JS_HONEST,
  JS_PROGRAM_TESTS,
  JS_RIGHT_FUNCTIONS,
  JS_RIGHT_PROGRAM,
} from './gaming/javascriptAttempts.js';
import {
  PY_ATTEMPTS,
  PY_FUNCTION_TESTS,
  PY_HONEST,
  PY_PROGRAM_TESTS,
  PY_RIGHT_FUNCTIONS,
  PY_RIGHT_PROGRAM,
} from './gaming/pythonAttempts.js';

/**
 * The gaming corpus: solutions written to fail their tests that try to be scored as passing anyway (a returned
 * value whose equality or serialized form lies, a solution that replaces what the harness relies on, ends the run,
 * forges or delays a report, or reads the expected value from the harness's stack). Each must fail every test; the
 * tricky but honest solutions beside them must pass theirs.
 */

interface Corpus {
  language: CodeLanguage;
  sandbox: () => CodeSandbox & { warm(): Promise<void> };
  functionTests: CodeTest[];
  programTests: CodeTest[];
  right: { functions: string; program: string };
  attempts: GamingAttempt[];
  honest: HonestSolution[];
}

const CORPORA: Corpus[] = [
  {
    language: 'javascript',
    sandbox: () => new QuickJsSandbox(),
    functionTests: JS_FUNCTION_TESTS,
    programTests: JS_PROGRAM_TESTS,
    right: { functions: JS_RIGHT_FUNCTIONS, program: JS_RIGHT_PROGRAM },
    attempts: JS_ATTEMPTS,
    honest: JS_HONEST,
  },
  {
    language: 'python',
    sandbox: () => new PyodideSandbox(),
    functionTests: PY_FUNCTION_TESTS,
    programTests: PY_PROGRAM_TESTS,
    right: { functions: PY_RIGHT_FUNCTIONS, program: PY_RIGHT_PROGRAM },
    attempts: PY_ATTEMPTS,
    honest: PY_HONEST,
  },
];

const LIMITS = { timeoutMs: 3000 };
const WAYS: GamingAttempt['way'][] = ['lying value', 'harness replaced', 'run ended', 'report forged', 'late report', 'stack inspection'];

describe.each(CORPORA)('gaming attempts: $language', (corpus) => {
  const sandbox = corpus.sandbox();
  beforeAll(() => sandbox.warm(), 120_000);
  afterAll(() => sandbox.dispose());

  const run = (code: string, tests: CodeTest[]) => sandbox.run({ language: corpus.language, code, tests, limits: LIMITS });
  const passedNames = async (code: string, tests: CodeTest[]) => (await run(code, tests)).tests.filter((t) => t.passed).map((t) => t.name);

  test('the corpus has at least 15 attempts, in every way', () => {
    expect(corpus.attempts.length).toBeGreaterThanOrEqual(15);
    expect(new Set(corpus.attempts.map((a) => a.way))).toEqual(
      new Set(corpus.language === 'python' ? WAYS : WAYS.filter((w) => w !== 'stack inspection')),
    );
  });

  test('the right solutions pass every test of both tasks', async () => {
    expect(await passedNames(corpus.right.functions, corpus.functionTests)).toEqual(corpus.functionTests.map((t) => t.name));
    expect(await passedNames(corpus.right.program, corpus.programTests)).toEqual(corpus.programTests.map((t) => t.name));
  }, 60_000);

  test.each(corpus.honest)(
    'honest: $name',
    async (honest) => {
      const result = await run(honest.code, honest.tests);
      const failed = result.tests.filter((t) => !t.passed);
      expect(failed.map((t) => [t.name, t.error])).toEqual((honest.failing ?? []).map((name) => [name, expect.any(String)]));
    },
    60_000,
  );

  test.each(corpus.attempts)(
    '$way: $name fails every test',
    async (attempt) => {
      const tests = attempt.task === 'program' ? corpus.programTests : corpus.functionTests;
      expect(await passedNames(attempt.code, tests)).toEqual([]);
    },
    60_000,
  );

  test('after the attempts, the right solutions still pass', async () => {
    expect(await passedNames(corpus.right.functions, corpus.functionTests)).toEqual(corpus.functionTests.map((t) => t.name));
    expect(await passedNames(corpus.right.program, corpus.programTests)).toEqual(corpus.programTests.map((t) => t.name));
  }, 60_000);
});
