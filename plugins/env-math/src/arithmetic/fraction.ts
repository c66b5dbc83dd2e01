/** Exact fractions of small integers, enough for the synthetic levels (operands stay far below 2^53). */
export interface Fraction {
  num: number;
  den: number;
}

export function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

export function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}

export function reduceFraction(num: number, den: number): Fraction {
  const sign = den < 0 ? -1 : 1;
  const g = gcd(num, den) || 1;
  return { num: (sign * num) / g + 0, den: (sign * den) / g };
}

/** `7`, `-3/4`: the answer format of the synthetic tasks. */
export function formatFraction(f: Fraction): string {
  return f.den === 1 ? `${f.num}` : `${f.num}/${f.den}`;
}
