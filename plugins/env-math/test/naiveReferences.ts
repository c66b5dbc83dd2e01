/**
 * The previous implementations of parsers that were quadratic (or recursed without bound), kept as oracles: on small
 * inputs they are fast enough, and the linear versions must give the same results.
 */
import { readBraceGroup } from '@drmas/core';

/** `checkArithmeticClaims` as one regex, retried at every operand of a chain that has no `=` after it. */
export function naiveArithmeticClaims(text: string): { claims: number; false: number } {
  const claim = /(?<![\w./^()+\-*])(\d+(?:\s*[-+*]\s*\d+)+)\s*=\s*(-?\d+)(?![\w/^(]|\.\d)/g;
  const evaluate = (expression: string): bigint => {
    let total = 0n;
    for (const term of expression.replace(/\s+/g, '').match(/[+-]?[^+-]+/g) ?? []) {
      const product = term
        .replace(/^[+-]/, '')
        .split('*')
        .reduce((acc, factor) => acc * BigInt(factor), 1n);
      total += term.startsWith('-') ? -product : product;
    }
    return total;
  };
  let claims = 0;
  let wrong = 0;
  for (const match of text.matchAll(claim)) {
    claims++;
    if (evaluate(match[1]!) !== BigInt(match[2]!)) wrong++;
  }
  return { claims, false: wrong };
}

/** `latexToMathjs` reading every group again at every level (`readBraceGroup` on each nested substring). */
export function naiveLatexToMathjs(latex: string): string | undefined {
  const commands: Record<string, string> = {
    cdot: '*',
    times: '*',
    div: '/',
    pi: ' pi ',
    sin: ' sin',
    cos: ' cos',
    tan: ' tan',
    ln: ' log',
    log: ' log',
    exp: ' exp',
  };
  let out = '';
  for (let i = 0; i < latex.length;) {
    const ch = latex[i];
    if (ch === '\\') {
      const name = /^[a-zA-Z]+/.exec(latex.slice(i + 1))?.[0];
      if (!name) return undefined;
      i += 1 + name.length;
      if (name === 'frac') {
        const top = latex[i] === '{' ? readBraceGroup(latex, i) : undefined;
        const bottom = top && latex[top.end] === '{' ? readBraceGroup(latex, top.end) : undefined;
        if (!top || !bottom) return undefined;
        const a = naiveLatexToMathjs(top.content);
        const b = naiveLatexToMathjs(bottom.content);
        if (a === undefined || b === undefined) return undefined;
        out += `((${a})/(${b}))`;
        i = bottom.end;
      } else if (name === 'sqrt') {
        let index: string | undefined;
        if (latex[i] === '[') {
          const close = latex.indexOf(']', i);
          if (close < 0) return undefined;
          index = naiveLatexToMathjs(latex.slice(i + 1, close));
          if (index === undefined) return undefined;
          i = close + 1;
        }
        const group = latex[i] === '{' ? readBraceGroup(latex, i) : undefined;
        if (!group) return undefined;
        const radicand = naiveLatexToMathjs(group.content);
        if (radicand === undefined) return undefined;
        out += index === undefined ? ` sqrt(${radicand})` : ` nthRoot((${radicand}),(${index}))`;
        i = group.end;
      } else if (Object.hasOwn(commands, name)) {
        out += commands[name];
      } else {
        return undefined;
      }
    } else {
      out += ch === '{' ? '(' : ch === '}' ? ')' : ch;
      i++;
    }
  }
  return out;
}

/**
 * The unit removal of `normalizeMathAnswer`, testing all the text written so far at every `\text{}` (quadratic in
 * their number): a `\text{X}` after a value is a unit (removed with its power), otherwise it becomes X.
 */
export function naiveRemoveTextUnits(s: string): string {
  const pattern = /\\(?:text|textbf|textrm|mbox|mathrm|mathbf|operatorname)\s*\{/g;
  let out = '';
  let from = 0;
  for (let m = pattern.exec(s); m; m = pattern.exec(s)) {
    const group = readBraceGroup(s, m.index + m[0].length - 1);
    if (!group) break;
    const before = out + s.slice(from, m.index);
    out = before + (/[0-9a-zA-Z})]\s*$/.test(before) ? '\u0000' : group.content);
    from = group.end;
    pattern.lastIndex = group.end;
  }
  return (
    (out + s.slice(from))
      // eslint-disable-next-line no-control-regex -- NUL marks a removed unit, as in normalizeMathAnswer
      .replace(/\u0000\s*\^\s*(?:\{\s*\d\s*\}|\d)/g, '')
      // eslint-disable-next-line no-control-regex -- the same mark
      .replace(/\u0000/g, '')
  );
}
