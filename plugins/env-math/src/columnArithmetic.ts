const SUM_OR_DIFFERENCE = /^(\d+)([+-])(\d+)$/;

function columnsOfSum(a: string, b: string): string[] {
  const columns: string[] = [];
  let carry = 0;
  for (let i = 1; i <= Math.max(a.length, b.length); i++) {
    const terms = [a.at(-i), b.at(-i)].filter((d): d is string => d !== undefined);
    if (carry) terms.push('1');
    const sum = terms.reduce((total, d) => total + Number(d), 0);
    columns.push(terms.length > 1 ? `${terms.join('+')}=${sum}` : `${sum}`);
    carry = sum >= 10 ? 1 : 0;
  }
  return columns;
}

function columnsOfDifference(a: string, b: string): string[] {
  const columns: string[] = [];
  let borrow = 0;
  for (let i = 1; i <= a.length; i++) {
    const top = Number(a.at(-i));
    const bottom = Number(b.at(-i) ?? 0);
    const borrows = top - borrow < bottom;
    const result = (borrows ? 10 : 0) + top - borrow - bottom;
    const terms = [`${borrows ? '1' : ''}${top}`, ...(borrow ? ['1'] : []), ...(b.at(-i) === undefined ? [] : [String(bottom)])];
    columns.push(terms.length > 1 ? `${terms.join('-')}=${result}` : `${result}`);
    borrow = borrows ? 1 : 0;
  }
  return columns;
}

/**
 * A sum or difference of non-negative integers worked column by column from the units, carries and borrows written
 * out, e.g. `127+47` gives `7+7=14, 2+4+1=7, 1; 127+47=174` and `52-27` gives `12-7=5, 5-1-2=2; 52-27=25`. Each
 * column is a one-digit fact, which a small model learns far sooner than a whole multi-digit sum. Undefined for
 * anything else (products, negatives, fractions, one-digit operands), which stays `expression=value`.
 */
export function columnWork(expression: string, value: string): string | undefined {
  const match = SUM_OR_DIFFERENCE.exec(expression);
  if (!match) return undefined;
  const a = match[1]!;
  const op = match[2]!;
  const b = match[3]!;
  if (a.length === 1 && b.length === 1) return undefined;
  if (op === '-' && Number(a) < Number(b)) return undefined;
  const columns = op === '+' ? columnsOfSum(a, b) : columnsOfDifference(a, b);
  return `${columns.join(', ')}; ${expression}=${value}`;
}
