import type { SolutionStep } from '../MathTask.js';
import type { SplitMix32 } from '@drmas/core';
import { canonicalExpressionKey, evaluateWithSteps, num, operation, renderExpression, type ExpressionNode } from './expressionTree.js';
import { formatFraction, gcd, lcm, reduceFraction, type Fraction } from './fraction.js';
import { generateWordProblem } from './wordProblems.js';

export interface GeneratedProblem {
  question: string;
  answer: string;
  steps: SolutionStep[];
  /** Same for problems that are the same up to presentation; decides the train/test partition. */
  key: string;
}

export const ARITHMETIC_LEVELS = [1, 2, 3, 4, 5] as const;

function fromExpression(tree: ExpressionNode): GeneratedProblem {
  const { value, steps } = evaluateWithSteps(tree);
  return {
    question: `What is ${renderExpression(tree)}?`,
    answer: `${value}`,
    steps,
    key: canonicalExpressionKey(tree),
  };
}

/** Level 1: a + b or a - b with a >= b, operands up to 99. */
function levelOne(r: SplitMix32): ExpressionNode {
  const a = r.range(1, 99);
  const b = r.range(1, 99);
  if (r.next() < 0.5) return operation('+', num(a), num(b));
  return operation('-', num(Math.max(a, b)), num(Math.min(a, b)));
}

/** Level 2: a * b + c, c + a * b, or a * b - c with c <= a * b. */
function levelTwo(r: SplitMix32): ExpressionNode {
  const a = r.range(2, 12);
  const b = r.range(2, 12);
  const product = operation('*', num(a), num(b));
  const shape = r.range(0, 2);
  if (shape === 0) return operation('+', product, num(r.range(1, 50)));
  if (shape === 1) return operation('+', num(r.range(1, 50)), product);
  return operation('-', product, num(r.range(1, Math.min(50, a * b))));
}

/** Level 3: three operations with parentheses and subtraction; intermediate values and answers may be negative. */
function levelThree(r: SplitMix32): ExpressionNode {
  const t = () => num(r.range(1, 20));
  const m = () => num(r.range(2, 9));
  const shapes: Array<() => ExpressionNode> = [
    () => operation('+', operation('*', operation('-', t(), t()), m()), t()), // (a - b) * c + d
    () => operation('-', t(), operation('*', operation('+', t(), t()), m())), // a - (b + c) * d
    () => operation('*', operation('-', t(), t()), operation('-', t(), t())), // (a - b) * (c - d)
    () => operation('-', operation('*', m(), operation('-', t(), t())), t()), // a * (b - c) - d
    () => operation('+', operation('*', num(-r.range(1, 20)), m()), t()), // (-a) * b + c
    () => operation('-', operation('+', t(), t()), operation('-', t(), t())), // a + b - (c - d)
  ];
  return r.pick(shapes)();
}

function randomProperFraction(r: SplitMix32): Fraction {
  for (;;) {
    const den = r.range(2, 12);
    const n = r.range(1, den - 1);
    if (gcd(n, den) === 1) return { num: n, den };
  }
}

/** Level 4: a/b + c/d, a/b - c/d or a/b * c/d with reduced proper fractions; the answer is reduced. */
function levelFour(r: SplitMix32): GeneratedProblem {
  const x = randomProperFraction(r);
  const y = randomProperFraction(r);
  const op = r.pick(['+', '-', '*'] as const);
  const fx = formatFraction(x);
  const fy = formatFraction(y);
  const forms: string[] = [`${fx}${op}${fy}`];
  let raw: Fraction;
  if (op === '*') {
    raw = { num: x.num * y.num, den: x.den * y.den };
    forms.push(`${raw.num}/${raw.den}`);
  } else {
    const den = lcm(x.den, y.den);
    const a = x.num * (den / x.den);
    const b = y.num * (den / y.den);
    if (den !== x.den || den !== y.den) forms.push(`${a}/${den}${op}${b}/${den}`);
    raw = { num: op === '+' ? a + b : a - b, den };
    forms.push(`${raw.num}/${raw.den}`);
  }
  const result = reduceFraction(raw.num, raw.den);
  const answer = formatFraction(result);
  if (forms[forms.length - 1] !== answer) forms.push(answer);
  const [k1, k2] = op === '-' ? [fx, fy] : [fx, fy].sort();
  return { question: `What is ${fx} ${op} ${fy}?`, answer, steps: [forms], key: `frac:${k1}${op}${k2}` };
}

export function generateArithmeticProblem(level: number, random: SplitMix32): GeneratedProblem {
  switch (level) {
    case 1:
      return fromExpression(levelOne(random));
    case 2:
      return fromExpression(levelTwo(random));
    case 3:
      return fromExpression(levelThree(random));
    case 4:
      return levelFour(random);
    case 5:
      return generateWordProblem(random);
    default:
      throw new RangeError(`unknown arithmetic level ${level}; levels are ${ARITHMETIC_LEVELS.join(', ')}`);
  }
}
