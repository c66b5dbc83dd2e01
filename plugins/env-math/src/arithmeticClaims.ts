/**
 * `a+b=c`-style claims in a worked solution: integers joined by `+`, `-` and `*`, an `=`, and an integer. A claim
 * next to anything that would make it part of a longer expression (a digit, a decimal point, `/`, `^`, a bracket, a
 * letter or another operator) is not read, so fractions, decimals and algebra are left alone.
 */
const CLAIM = /(?<![\w./^()+\-*])(\d+(?:\s*[-+*]\s*\d+)+)\s*=\s*(-?\d+)(?![\w/^(]|\.\d)/g;

export interface ArithmeticClaims {
  /** Claims read. */
  claims: number;
  /** Claims whose value is not what the expression gives. */
  false: number;
}

/** The value of integers joined by `+`, `-` and `*`, products first, in exact integers. */
function evaluate(expression: string): bigint {
  let total = 0n;
  for (const term of expression.replace(/\s+/g, '').match(/[+-]?[^+-]+/g) ?? []) {
    const negative = term.startsWith('-');
    const product = term
      .replace(/^[+-]/, '')
      .split('*')
      .reduce((acc, factor) => acc * BigInt(factor), 1n);
    total += negative ? -product : product;
  }
  return total;
}

/**
 * Reads the arithmetic claims of `text` and counts the false ones, e.g. `8*10=80. 0+7=7, 8+4=11; 80+47=127`
 * has four claims, one false (`8+4=11`).
 */
export function checkArithmeticClaims(text: string): ArithmeticClaims {
  let claims = 0;
  let wrong = 0;
  for (const match of text.matchAll(CLAIM)) {
    claims++;
    // Both groups of CLAIM are required, so they are always set.
    if (evaluate(match[1]!) !== BigInt(match[2]!)) wrong++;
  }
  return { claims, false: wrong };
}
