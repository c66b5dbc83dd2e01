import type { SplitMix32 } from '@drmas/core';

/**
 * One family of one-line functions: what the prompt asks, the body in each language, and the value it must return
 * (computed here, in TypeScript, so a task's expected outputs never come from running its own solution).
 */
export interface FunctionTemplate {
  name: string;
  /** Argument names of `f`. */
  params: readonly string[];
  constants(random: SplitMix32): number[];
  /** The prompt's description: "returns x plus 3". */
  describe(c: readonly number[]): string;
  javascript(c: readonly number[]): string;
  python(c: readonly number[]): string;
  /** Argument lists for one test each. */
  inputs(random: SplitMix32, count: number): unknown[][];
  value(c: readonly number[], args: readonly unknown[]): unknown;
}

const intArgs =
  (arity: number, min = -20, max = 20) =>
  (random: SplitMix32, count: number): number[][] =>
    Array.from({ length: count }, () => Array.from({ length: arity }, () => random.range(min, max)));

const WORDS = ['ab', 'xy', 'cat', 'no', 'hi', 'z'];

export const FUNCTION_TEMPLATES: readonly FunctionTemplate[] = [
  {
    name: 'add',
    params: ['x'],
    constants: (r) => [r.range(1, 19)],
    describe: ([c]) => `returns x plus ${c}`,
    javascript: ([c]) => `x + ${c}`,
    python: ([c]) => `x + ${c}`,
    inputs: intArgs(1),
    value: ([c], [x]) => (x as number) + c!,
  },
  {
    name: 'subtract',
    params: ['x'],
    constants: (r) => [r.range(1, 19)],
    describe: ([c]) => `returns x minus ${c}`,
    javascript: ([c]) => `x - ${c}`,
    python: ([c]) => `x - ${c}`,
    inputs: intArgs(1),
    value: ([c], [x]) => (x as number) - c!,
  },
  {
    name: 'multiply',
    params: ['x'],
    constants: (r) => [r.range(2, 9)],
    describe: ([c]) => `returns x times ${c}`,
    javascript: ([c]) => `x * ${c}`,
    python: ([c]) => `x * ${c}`,
    inputs: intArgs(1),
    value: ([c], [x]) => (x as number) * c!,
  },
  {
    name: 'affine',
    params: ['x'],
    constants: (r) => [r.range(2, 9), r.range(1, 19)],
    describe: ([a, b]) => `returns x times ${a} plus ${b}`,
    javascript: ([a, b]) => `x * ${a} + ${b}`,
    python: ([a, b]) => `x * ${a} + ${b}`,
    inputs: intArgs(1),
    value: ([a, b], [x]) => (x as number) * a! + b!,
  },
  {
    name: 'sum-of-two',
    params: ['a', 'b'],
    constants: (r) => [r.range(1, 19)],
    describe: ([c]) => `returns a plus b plus ${c}`,
    javascript: ([c]) => `a + b + ${c}`,
    python: ([c]) => `a + b + ${c}`,
    inputs: intArgs(2),
    value: ([c], [a, b]) => (a as number) + (b as number) + c!,
  },
  {
    name: 'scaled-difference',
    params: ['a', 'b'],
    constants: (r) => [r.range(2, 9)],
    describe: ([c]) => `returns a times ${c} minus b`,
    javascript: ([c]) => `a * ${c} - b`,
    python: ([c]) => `a * ${c} - b`,
    inputs: intArgs(2),
    value: ([c], [a, b]) => (a as number) * c! - (b as number),
  },
  {
    name: 'max',
    params: ['x'],
    constants: (r) => [r.range(-20, 20)],
    describe: ([c]) => `returns the larger of x and ${c}`,
    javascript: ([c]) => `Math.max(x, ${c})`,
    python: ([c]) => `max(x, ${c})`,
    inputs: intArgs(1),
    value: ([c], [x]) => Math.max(x as number, c!),
  },
  {
    name: 'min',
    params: ['x'],
    constants: (r) => [r.range(-20, 20)],
    describe: ([c]) => `returns the smaller of x and ${c}`,
    javascript: ([c]) => `Math.min(x, ${c})`,
    python: ([c]) => `min(x, ${c})`,
    inputs: intArgs(1),
    value: ([c], [x]) => Math.min(x as number, c!),
  },
  {
    // Non-negative x only: JavaScript's % and Python's % differ on negative numbers.
    name: 'remainder',
    params: ['x'],
    constants: (r) => [r.range(2, 9)],
    describe: ([c]) => `returns the remainder of x divided by ${c}`,
    javascript: ([c]) => `x % ${c}`,
    python: ([c]) => `x % ${c}`,
    inputs: intArgs(1, 0, 40),
    value: ([c], [x]) => (x as number) % c!,
  },
  {
    name: 'greater-than',
    params: ['x'],
    constants: (r) => [r.range(-20, 20)],
    describe: ([c]) => `returns 1 if x is greater than ${c}, else 0`,
    javascript: ([c]) => `x > ${c} ? 1 : 0`,
    python: ([c]) => `1 if x > ${c} else 0`,
    inputs: intArgs(1),
    value: ([c], [x]) => ((x as number) > c! ? 1 : 0),
  },
  {
    name: 'square-plus',
    params: ['x'],
    constants: (r) => [r.range(1, 19)],
    describe: ([c]) => `returns x squared plus ${c}`,
    javascript: ([c]) => `x * x + ${c}`,
    python: ([c]) => `x * x + ${c}`,
    inputs: intArgs(1),
    value: ([c], [x]) => (x as number) * (x as number) + c!,
  },
  {
    name: 'repeat',
    params: ['s'],
    constants: (r) => [r.range(2, 5)],
    describe: ([c]) => `returns the string s repeated ${c} times`,
    javascript: ([c]) => `s.repeat(${c})`,
    python: ([c]) => `s * ${c}`,
    inputs: (random, count) => Array.from({ length: count }, () => [random.pick(WORDS)]),
    value: ([c], [s]) => (s as string).repeat(c!),
  },
];
