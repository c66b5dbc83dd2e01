import type { SolutionStep } from '../MathTask.js';

export type IntegerOperator = '+' | '-' | '*';

export type ExpressionNode =
  { kind: 'number'; value: number } | { kind: 'operation'; op: IntegerOperator; left: ExpressionNode; right: ExpressionNode };

export const num = (value: number): ExpressionNode => ({ kind: 'number', value });
export const operation = (op: IntegerOperator, left: ExpressionNode, right: ExpressionNode): ExpressionNode => ({
  kind: 'operation',
  op,
  left,
  right,
});

const PRECEDENCE: Record<IntegerOperator, number> = { '+': 1, '-': 1, '*': 2 };

/** The expression as a question shows it: spaced operators, only the parentheses it needs, negatives as `(-4)`. */
export function renderExpression(node: ExpressionNode): string {
  if (node.kind === 'number') return node.value < 0 ? `(${node.value})` : `${node.value}`;
  const side = (child: ExpressionNode, isRight: boolean): string => {
    const text = renderExpression(child);
    if (child.kind === 'number') return text;
    const p = PRECEDENCE[child.op];
    const parent = PRECEDENCE[node.op];
    const needs = p < parent || (p === parent && isRight && node.op === '-');
    return needs ? `(${text})` : text;
  };
  return `${side(node.left, false)} ${node.op} ${side(node.right, true)}`;
}

/** A key equal for expressions that differ only by the order of `+` or `*` operands (`3 + 5` and `5 + 3`). */
export function canonicalExpressionKey(node: ExpressionNode): string {
  if (node.kind === 'number') return `${node.value}`;
  let left = canonicalExpressionKey(node.left);
  let right = canonicalExpressionKey(node.right);
  if (node.op !== '-' && right < left) [left, right] = [right, left];
  return `(${left}${node.op}${right})`;
}

function apply(op: IntegerOperator, a: number, b: number): number {
  return op === '+' ? a + b : op === '-' ? a - b : a * b;
}

/** The value, and one step per operation in evaluation order: `['12-5', '7']`, `['4+(-18)', '-14']`. */
export function evaluateWithSteps(node: ExpressionNode): { value: number; steps: SolutionStep[] } {
  const steps: SolutionStep[] = [];
  const visit = (n: ExpressionNode): number => {
    if (n.kind === 'number') return n.value;
    const a = visit(n.left);
    const b = visit(n.right);
    const value = apply(n.op, a, b);
    steps.push([`${a}${n.op}${b < 0 ? `(${b})` : b}`, `${value}`]);
    return value;
  };
  const value = visit(node);
  return { value, steps };
}
