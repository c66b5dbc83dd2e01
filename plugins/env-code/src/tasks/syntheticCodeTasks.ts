import { DrmasError, hashParts, SplitMix32 } from '@drmas/core';
import type { CodeLanguage, CodeTest } from '../sandbox/CodeSandbox.js';
import type { CodeSplit, CodeTask } from './CodeTask.js';
import { FUNCTION_TEMPLATES, type FunctionTemplate } from './syntheticTemplates.js';

export const SYNTHETIC_CODE_SOURCE = 'synthetic-code';

/**
 * Share of all functions (language, template, constants) held out. The partition depends on the function only,
 * not on the seed or the test inputs, so a held-out function is never trained on, in any run.
 */
export const CODE_HELD_OUT_SHARE = 0.15;

const TESTS_PER_TASK = 4;
const MAX_REDRAWS = 10_000;

const LANGUAGE_NAMES: Record<CodeLanguage, string> = { javascript: 'JavaScript', python: 'Python' };

export interface SyntheticCodeOptions {
  seed: number;
  /** Languages drawn uniformly per task. */
  languages: readonly CodeLanguage[];
  trainSize: number;
  testSize: number;
}

export function isHeldOutFunction(key: string): boolean {
  return hashParts('drmas/env-code/held-out', key) / 4294967296 < CODE_HELD_OUT_SHARE;
}

interface Draw {
  key: string;
  language: CodeLanguage;
  template: FunctionTemplate;
  constants: number[];
  random: SplitMix32;
}

function draw(seed: number, split: CodeSplit, index: number, attempt: number, languages: readonly CodeLanguage[]): Draw {
  const random = new SplitMix32(hashParts('synthetic-code', seed, split, index, attempt));
  const language = random.pick(languages);
  const template = random.pick(FUNCTION_TEMPLATES);
  const constants = template.constants(random);
  return { key: `${language}/${template.name}/${constants.join(',')}`, language, template, constants, random };
}

/** The reference one-liner: `function f(x) { return x + 3; }` or `def f(x):\n    return x + 3`. */
export function syntheticSolution(language: CodeLanguage, template: FunctionTemplate, constants: readonly number[]): string {
  const params = template.params.join(', ');
  return language === 'javascript'
    ? `function f(${params}) { return ${template.javascript(constants)}; }`
    : `def f(${params}):\n    return ${template.python(constants)}`;
}

function toTask(drawn: Draw, split: CodeSplit, id: string): CodeTask {
  const { language, template, constants, random } = drawn;
  const tests: CodeTest[] = [];
  const seen = new Set<string>();
  for (let k = 0; tests.length < TESTS_PER_TASK && k < 50; k++) {
    const [args] = template.inputs(random, 1);
    const key = JSON.stringify(args);
    if (seen.has(key)) continue;
    seen.add(key);
    tests.push({ name: `f(${key.slice(1, -1)})`, kind: 'call', fn: 'f', args: args!, expected: template.value(constants, args!) });
  }
  return {
    id,
    prompt: `Write a ${LANGUAGE_NAMES[language]} function f(${template.params.join(', ')}) that ${template.describe(constants)}.`,
    entryPoint: 'f',
    tests,
    language,
    solution: syntheticSolution(language, template, constants),
    dataSource: SYNTHETIC_CODE_SOURCE,
    split,
  };
}

/**
 * Deterministic one-line function tasks (`Write a JavaScript function f(x) that returns x plus 3.`), each judged
 * by four calls. Task `index` of a split is a pure function of (seed, split, index). Training tasks may repeat a
 * function with other inputs; the held-out list has `testSize` distinct functions, none of which is in training.
 */
export function syntheticCodeTasks(options: SyntheticCodeOptions): { train: CodeTask[]; test: CodeTask[] } {
  const { seed, languages, trainSize, testSize } = options;
  const train: CodeTask[] = [];
  for (let index = 0; index < trainSize; index++) {
    let task: CodeTask | undefined;
    for (let attempt = 0; attempt < MAX_REDRAWS && !task; attempt++) {
      const drawn = draw(seed, 'train', index, attempt, languages);
      if (!isHeldOutFunction(drawn.key)) task = toTask(drawn, 'train', `code-${seed}-train-${index}`);
    }
    train.push(task!);
  }
  const test: CodeTask[] = [];
  const seen = new Set<string>();
  const maxDraws = 1000 + 50 * testSize;
  for (let k = 0; test.length < testSize; k++) {
    if (k >= maxDraws)
      throw new DrmasError('LIMIT_EXCEEDED', `only ${test.length} distinct held-out functions exist for env.testSize ${testSize}`, {
        key: 'env.testSize',
        hint: `lower env.testSize to ${test.length} or less, or add a language to env.languages`,
      });
    const drawn = draw(seed, 'test', k, 0, languages);
    if (!isHeldOutFunction(drawn.key) || seen.has(drawn.key)) continue;
    seen.add(drawn.key);
    test.push(toTask(drawn, 'test', `code-${seed}-test-${test.length}`));
  }
  return { train, test };
}
