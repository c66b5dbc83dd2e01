import { createRequire } from 'node:module';
import type { MathJsInstance, MathNode } from 'mathjs';
import { readBraceGroup } from './boxedAnswer.js';
import { SeededRandom } from './random/splitmix32.js';

const MAX_INPUT_LENGTH = 300;
const MAX_NODES = 80;
const SAMPLE_POINTS = 6;
const MIN_AGREEING_POINTS = 3;
const RELATIVE_TOLERANCE = 1e-9;

const COMMANDS: Record<string, string> = {
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
const FUNCTIONS = new Set(['sqrt', 'nthRoot', 'sin', 'cos', 'tan', 'log', 'exp', 'abs']);
const CONSTANTS = new Set(['pi', 'e', 'i']);
const OPERATORS = new Set(['add', 'subtract', 'multiply', 'divide', 'unaryMinus', 'unaryPlus', 'pow']);

let mathjs: MathJsInstance | undefined;

/**
 * mathjs is loaded on the first symbolic comparison, not at import: it is a large module graph (about a second
 * to load), and most answers are settled by the string and exact-number checks.
 */
function math(): MathJsInstance {
  if (!mathjs) {
    const { create, all } = createRequire(import.meta.url)('mathjs') as typeof import('mathjs');
    if (!all) throw new Error('the installed mathjs has no `all` factory bundle');
    mathjs = create(all);
  }
  return mathjs;
}

/**
 * Simple LaTeX to mathjs syntax: `\frac{a}{b}`, `\sqrt{x}`, `\sqrt[n]{x}`, `\cdot`, `\times`, `^{..}`, `\pi`,
 * common functions; braces become parentheses. Undefined for any other command.
 */
export function latexToMathjs(latex: string): string | undefined {
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
        const a = latexToMathjs(top.content);
        const b = latexToMathjs(bottom.content);
        if (a === undefined || b === undefined) return undefined;
        out += `((${a})/(${b}))`;
        i = bottom.end;
      } else if (name === 'sqrt') {
        let index: string | undefined;
        if (latex[i] === '[') {
          const close = latex.indexOf(']', i);
          if (close < 0) return undefined;
          index = latexToMathjs(latex.slice(i + 1, close));
          if (index === undefined) return undefined;
          i = close + 1;
        }
        const group = latex[i] === '{' ? readBraceGroup(latex, i) : undefined;
        if (!group) return undefined;
        const radicand = latexToMathjs(group.content);
        if (radicand === undefined) return undefined;
        out += index === undefined ? ` sqrt(${radicand})` : ` nthRoot((${radicand}),(${index}))`;
        i = group.end;
      } else if (name in COMMANDS) {
        out += COMMANDS[name];
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

/** Only arithmetic, whitelisted functions, numbers, one-letter variables and pi/e/i; small trees. */
function isSafeExpression(node: MathNode): boolean {
  let count = 0;
  const visit = (n: MathNode): boolean => {
    if (++count > MAX_NODES) return false;
    switch (n.type) {
      case 'ConstantNode':
        return typeof (n as unknown as { value: unknown }).value === 'number';
      case 'SymbolNode': {
        const name = (n as unknown as { name: string }).name;
        return /^[a-zA-Z]$/.test(name) || CONSTANTS.has(name);
      }
      case 'ParenthesisNode':
        return visit((n as unknown as { content: MathNode }).content);
      case 'OperatorNode': {
        const op = n as unknown as { fn: string; args: MathNode[] };
        return OPERATORS.has(op.fn) && op.args.every(visit);
      }
      case 'FunctionNode': {
        const fn = n as unknown as { fn: { name?: string }; args: MathNode[] };
        return fn.fn.name !== undefined && FUNCTIONS.has(fn.fn.name) && fn.args.every(visit);
      }
      default:
        return false;
    }
  };
  return visit(node);
}

function parseLatex(latex: string): MathNode | undefined {
  if (latex.length > MAX_INPUT_LENGTH) return undefined;
  const source = latexToMathjs(latex);
  if (source === undefined || source.trim() === '') return undefined;
  const node = math().parse(source);
  return isSafeExpression(node) ? node : undefined;
}

function freeVariables(node: MathNode): Set<string> {
  const names = new Set<string>();
  const visit = (n: MathNode): void => {
    if (n.type === 'SymbolNode') {
      const name = (n as unknown as { name: string }).name;
      if (!CONSTANTS.has(name)) names.add(name);
    } else if (n.type === 'FunctionNode') {
      (n as unknown as { args: MathNode[] }).args.forEach(visit);
    } else {
      n.forEach((child) => visit(child));
    }
  };
  visit(node);
  return names;
}

/** A real or complex result as [re, im]; undefined when not finite or not a number. */
function asComplex(value: unknown): [number, number] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? [value, 0] : undefined;
  if (value && typeof value === 'object' && 're' in value && 'im' in value) {
    const { re, im } = value;
    if (typeof re === 'number' && typeof im === 'number' && Number.isFinite(re) && Number.isFinite(im)) return [re, im];
  }
  return undefined;
}

function close(a: [number, number], b: [number, number]): boolean {
  const scale = Math.max(1, Math.hypot(a[0], a[1]), Math.hypot(b[0], b[1]));
  return Math.hypot(a[0] - b[0], a[1] - b[1]) <= RELATIVE_TOLERANCE * scale;
}

/**
 * Symbolic equivalence of two normalized LaTeX answers: equal when mathjs simplifies `a - b` to 0, or when both
 * agree (relative tolerance 1e-9) on every one of 6 seeded random points where either is defined, with at least 3
 * such points (for constant expressions: the one value). Any parse or evaluation failure means "not equal".
 */
export function symbolicallyEqual(a: string, b: string): boolean {
  try {
    const left = parseLatex(a);
    const right = parseLatex(b);
    if (!left || !right) return false;
    const variables = [...new Set([...freeVariables(left), ...freeVariables(right)])].sort();
    const f = left.compile();
    const g = right.compile();
    if (variables.length === 0) {
      const x = asComplex(f.evaluate({}));
      const y = asComplex(g.evaluate({}));
      return x !== undefined && y !== undefined && close(x, y);
    }
    const difference = math().simplify(new (math().OperatorNode)('-', 'subtract', [left, right]));
    if (difference.type === 'ConstantNode' && (difference as unknown as { value: unknown }).value === 0) return true;
    const random = new SeededRandom(0x5eed);
    let agreeing = 0;
    for (let p = 0; p < SAMPLE_POINTS; p++) {
      const scope: Record<string, number> = {};
      for (const v of variables) scope[v] = 0.3 + 2 * random.float();
      const x = asComplex(f.evaluate(scope));
      const y = asComplex(g.evaluate(scope));
      if (x === undefined && y === undefined) continue;
      if (x === undefined || y === undefined || !close(x, y)) return false;
      agreeing++;
    }
    return agreeing >= MIN_AGREEING_POINTS;
  } catch {
    return false;
  }
}
