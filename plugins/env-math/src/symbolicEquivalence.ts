import { createRequire } from 'node:module';
import type { MathJsInstance, MathNode } from 'mathjs';
import { SplitMix32 } from '@drmas/core';

const MAX_INPUT_LENGTH = 300;
const MAX_NODES = 80;
/**
 * mathjs's `simplify` takes time that grows exponentially with some trees (`a - b` of two sums of 16 alternating x
 * and y: over two minutes), so it is tried only when the two answers together have at most this many nodes; larger
 * ones are compared at the sample points alone.
 */
export const MAX_SIMPLIFY_NODES = 24;
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
 * Groups (`\frac{..}{..}`, `\sqrt{..}`, `\sqrt[..]`) nested deeper than this make `latexToMathjs` give undefined
 * rather than recurse on: no answer is nested that deep, and the call stack is finite.
 */
export const MAX_LATEX_NESTING = 100;

const COMMAND_NAME = /[a-zA-Z]+/y;

/**
 * For each `{` of `text`, the index of the `}` closing it (-1 when none), honouring escapes as `readBraceGroup`
 * does; found in one pass, where reading each group again at every level of nesting took quadratic time.
 */
function closingBraces(text: string): Int32Array {
  const closes = new Int32Array(text.length).fill(-1);
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '{') open.push(i);
    else if (ch === '}' && open.length > 0) closes[open.pop()!] = i;
  }
  return closes;
}

/**
 * Simple LaTeX to mathjs syntax: `\frac{a}{b}`, `\sqrt{x}`, `\sqrt[n]{x}`, `\cdot`, `\times`, `^{..}`, `\pi`,
 * common functions; braces become parentheses. Undefined for any other command, and for groups nested deeper
 * than `MAX_LATEX_NESTING`. Time linear in the length of `latex`.
 */
export function latexToMathjs(latex: string): string | undefined {
  const closes = closingBraces(latex);
  const command = new RegExp(COMMAND_NAME);
  /** The group opening at `open`, when it closes before `to`: [content start, content end]. */
  const group = (open: number, to: number): [number, number] | undefined => {
    const close = open < to && latex[open] === '{' ? closes[open]! : -1;
    return close >= 0 && close < to ? [open + 1, close] : undefined;
  };
  /** The translation of latex[from, to), as if it were a string of its own. */
  const translate = (from: number, to: number, depth: number): string | undefined => {
    if (depth > MAX_LATEX_NESTING) return undefined;
    let out = '';
    for (let i = from; i < to;) {
      const ch = latex[i];
      if (ch === '\\') {
        command.lastIndex = i + 1;
        const name = command.exec(latex)?.[0].slice(0, to - i - 1);
        if (!name) return undefined;
        i += 1 + name.length;
        if (name === 'frac') {
          const top = group(i, to);
          const bottom = top && group(top[1] + 1, to);
          if (!top || !bottom) return undefined;
          const a = translate(top[0], top[1], depth + 1);
          const b = a === undefined ? undefined : translate(bottom[0], bottom[1], depth + 1);
          if (a === undefined || b === undefined) return undefined;
          out += `((${a})/(${b}))`;
          i = bottom[1] + 1;
        } else if (name === 'sqrt') {
          let index: string | undefined;
          if (i < to && latex[i] === '[') {
            const close = latex.indexOf(']', i);
            if (close < 0 || close >= to) return undefined;
            index = translate(i + 1, close, depth + 1);
            if (index === undefined) return undefined;
            i = close + 1;
          }
          const body = group(i, to);
          const radicand = body && translate(body[0], body[1], depth + 1);
          if (!body || radicand === undefined) return undefined;
          out += index === undefined ? ` sqrt(${radicand})` : ` nthRoot((${radicand}),(${index}))`;
          i = body[1] + 1;
        } else if (Object.hasOwn(COMMANDS, name)) {
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
  };
  return translate(0, latex.length, 0);
}

/**
 * The number of nodes of a tree of only arithmetic, whitelisted functions, numbers, one-letter variables and
 * pi/e/i, of at most MAX_NODES nodes; undefined for any other tree.
 */
function safeSize(node: MathNode): number | undefined {
  const m = math();
  let count = 0;
  const visit = (n: MathNode): boolean => {
    if (++count > MAX_NODES) return false;
    if (m.isConstantNode(n)) return typeof n.value === 'number';
    if (m.isSymbolNode(n)) return /^[a-zA-Z]$/.test(n.name) || CONSTANTS.has(n.name);
    if (m.isParenthesisNode(n)) return visit(n.content);
    if (m.isOperatorNode(n)) return OPERATORS.has(n.fn) && n.args.every(visit);
    // A FunctionNode's `fn` is typed as a SymbolNode, but `a.b(x)` parses to one whose `fn` has no name.
    if (m.isFunctionNode(n)) return typeof n.fn.name === 'string' && FUNCTIONS.has(n.fn.name) && n.args.every(visit);
    return false;
  };
  return visit(node) ? count : undefined;
}

function parseLatex(latex: string): { node: MathNode; size: number } | undefined {
  if (latex.length > MAX_INPUT_LENGTH) return undefined;
  const source = latexToMathjs(latex);
  if (source === undefined || source.trim() === '') return undefined;
  const node = math().parse(source);
  const size = safeSize(node);
  return size === undefined ? undefined : { node, size };
}

function freeVariables(node: MathNode): Set<string> {
  const m = math();
  const names = new Set<string>();
  const visit = (n: MathNode): void => {
    if (m.isSymbolNode(n)) {
      if (!CONSTANTS.has(n.name)) names.add(n.name);
    } else if (m.isFunctionNode(n)) {
      n.args.forEach(visit);
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
 * Symbolic equivalence of two normalized LaTeX answers: equal when mathjs simplifies `a - b` to 0 (tried when the two
 * have at most MAX_SIMPLIFY_NODES nodes together), or when both agree (relative tolerance 1e-9) on every one of 6
 * seeded random points where either is defined, with at least 3 such points (for constant expressions: the one
 * value). Any parse or evaluation failure means "not equal"; so do inputs over 300 characters or 80 nodes each.
 */
export function symbolicallyEqual(a: string, b: string): boolean {
  try {
    const left = parseLatex(a);
    const right = parseLatex(b);
    if (!left || !right) return false;
    const variables = [...new Set([...freeVariables(left.node), ...freeVariables(right.node)])].sort();
    const f = left.node.compile();
    const g = right.node.compile();
    if (variables.length === 0) {
      const x = asComplex(f.evaluate({}));
      const y = asComplex(g.evaluate({}));
      return x !== undefined && y !== undefined && close(x, y);
    }
    if (left.size + right.size <= MAX_SIMPLIFY_NODES) {
      const difference = math().simplify(new (math().OperatorNode)('-', 'subtract', [left.node, right.node]));
      if (math().isConstantNode(difference) && difference.value === 0) return true;
    }
    const random = new SplitMix32(0x5eed);
    let agreeing = 0;
    for (let p = 0; p < SAMPLE_POINTS; p++) {
      const scope: Record<string, number> = {};
      for (const v of variables) scope[v] = 0.3 + 2 * random.next();
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
