/**
 * The value of an integer expression of `+`, `-`, `*` and parentheses (`8 * 10 + 47`, `(3 - 12) * 4`), by
 * JavaScript's own arithmetic: an oracle independent of the task generators whose answers the tests check.
 */
export function arithmeticValue(expression: string): number {
  if (!/^[-+*() 0-9]+$/.test(expression)) throw new Error(`not an expression of integers, + - * and parentheses: ${expression}`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- JavaScript evaluating the expression is the independent oracle; the check above admits only digits, + - *, parentheses and spaces
  const evaluate = Function(`return (${expression});`) as () => number;
  return evaluate();
}
