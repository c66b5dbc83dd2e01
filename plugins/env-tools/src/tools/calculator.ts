import { createRequire } from 'node:module';
import { defineTool, z } from '@drmas/core';
import type { MathJsInstance, MathNode } from 'mathjs';
import { arithmeticTasks } from '../tasks/toolTaskKinds.js';

/** Exponents beyond this are refused: 2^1000 has 302 digits, and a power of a power could exhaust memory. */
export const MAX_EXPONENT = 1000;
/** Digits of a result's numerator or denominator beyond which it is refused rather than printed. */
export const MAX_RESULT_DIGITS = 2000;

const OPERATORS = new Set(['add', 'subtract', 'multiply', 'divide', 'pow', 'mod', 'unaryMinus', 'unaryPlus']);
const FUNCTIONS = new Set(['abs', 'gcd', 'lcm', 'mod', 'floor', 'ceil', 'round']);

let mathjs: MathJsInstance | undefined;

/** mathjs with every number a Fraction (fraction.js on BigInt): rationals of any size, exactly. Loaded on first use. */
function exactMath(): MathJsInstance {
  if (!mathjs) {
    const { create, all } = createRequire(import.meta.url)('mathjs') as typeof import('mathjs');
    mathjs = create(all!, { number: 'Fraction' });
  }
  return mathjs;
}

/**
 * Evaluates an arithmetic expression exactly: `+ - * / ^ mod`, parentheses, and abs, gcd, lcm, mod, floor, ceil,
 * round. Parsed by mathjs, then checked node by node, so nothing but numbers and these operations is evaluated (no
 * symbols, assignments, functions of mathjs's own like `import`, or units). Results are exact: `0.1 + 0.2` is `0.3`,
 * `1/3` stays `1/3` (printed with a decimal approximation), integers have no size limit but `MAX_RESULT_DIGITS`.
 */
export function evaluateExactly(expression: string): string {
  const math = exactMath();
  let tree: MathNode;
  try {
    tree = math.parse(expression);
  } catch (error) {
    throw new Error(`cannot parse "${expression}": ${(error as Error).message}`, { cause: error });
  }
  checkTree(tree);
  let value: unknown;
  try {
    value = tree.evaluate();
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(/division by zero/i.test(message) ? 'division by zero' : message, { cause: error });
  }
  if (math.typeOf(value) !== 'Fraction') throw new Error(`"${expression}" is not a number`);
  const fraction = value as { n: bigint; d: bigint; s: bigint; toFraction(): string; toString(decimals?: number): string };
  if (fraction.n.toString().length > MAX_RESULT_DIGITS || fraction.d.toString().length > MAX_RESULT_DIGITS)
    throw new Error(`the result has more than ${MAX_RESULT_DIGITS} digits`);
  return terminates(fraction.d) ? fraction.toString() : `${fraction.toFraction()} (about ${approximate(fraction)})`;
}

function checkTree(root: MathNode): void {
  const m = exactMath();
  root.traverse((node) => {
    // A FunctionNode's name is a SymbolNode child, checked with the function; a symbol elsewhere is refused below.
    if (m.isConstantNode(node) || m.isParenthesisNode(node) || m.isSymbolNode(node)) return;
    if (m.isOperatorNode(node)) {
      if (!OPERATORS.has(node.fn)) throw new Error(`the operator "${node.op}" is not supported`);
      if (node.fn === 'pow') checkPower(node.args[0]!, node.args[1]!);
      return;
    }
    if (m.isFunctionNode(node)) {
      const name = node.fn.name ?? '';
      if (!FUNCTIONS.has(name)) throw new Error(`the function "${name}" is not supported (supported: ${[...FUNCTIONS].join(', ')})`);
      return;
    }
    throw new Error(`"${node.toString()}" is not arithmetic (numbers, + - * / ^ mod, parentheses and ${[...FUNCTIONS].join(', ')} only)`);
  });
  root.traverse((node, path, parent) => {
    if (node.type === 'SymbolNode' && !(parent?.type === 'FunctionNode' && path === 'fn'))
      throw new Error(`"${node.toString()}" is not a number: the calculator knows no variables or constants`);
  });
}

/** The exponent must be a whole number written out (bounded), and the base hold no power itself. */
function checkPower(base: MathNode, exponent: MathNode): void {
  const m = exactMath();
  let inner = exponent;
  for (;;) {
    if (m.isParenthesisNode(inner)) inner = inner.content;
    else if (m.isOperatorNode(inner) && /^unary/.test(inner.fn)) inner = inner.args[0]!;
    else break;
  }
  // Constants are Fractions in the calculator's mathjs (`number: 'Fraction'`).
  const value = m.isConstantNode(inner) ? (inner.value as unknown) : undefined;
  if (!m.isFraction(value) || value.d !== 1n || value.n > BigInt(MAX_EXPONENT))
    throw new Error(`exponents must be whole numbers written out, at most ${MAX_EXPONENT}`);
  let nested = false;
  base.traverse((node) => {
    if (m.isOperatorNode(node) && node.fn === 'pow') nested = true;
  });
  if (nested) throw new Error('a power of a power is not supported: write the exponent out');
}

function terminates(denominator: bigint): boolean {
  let d = denominator;
  while (d % 2n === 0n) d /= 2n;
  while (d % 5n === 0n) d /= 5n;
  return d === 1n;
}

function approximate(fraction: { toString(decimals?: number): string; s: bigint; n: bigint; d: bigint }): string {
  // fraction.js writes repeating decimals as 0.(3); the approximation is cut at 12 decimals instead.
  const scaled = (fraction.n * 10n ** 12n) / fraction.d;
  const digits = scaled.toString().padStart(13, '0');
  const text = `${digits.slice(0, -12)}.${digits.slice(-12)}`.replace(/0+$/, '');
  return `${fraction.s < 0n ? '-' : ''}${text}`;
}

/** The calculator tool: exact arithmetic on an expression; its tasks are `arithmetic`. */
export const calculatorTool = defineTool({
  name: 'calculator',
  description: 'exact arithmetic: + - * / ^ mod ( )',
  tasks: arithmeticTasks,
  input: z.strictObject({ expression: z.string().min(1).max(500).describe('an arithmetic expression, e.g. "123 * (45 - 6) / 7"') }),
  run: ({ expression }) => evaluateExactly(expression),
});
