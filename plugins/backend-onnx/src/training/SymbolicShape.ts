import type { Dim } from '../onnx/GraphBuilder.js';

/**
 * Shapes whose dimensions are numbers, named sizes (`batch`), products of them (`2*batch*columns`, written in one
 * canonical order so that equal products compare equal as strings) or unknown (`?7`, equal only to itself). The
 * backward pass needs them to know which axes an operand was broadcast over; what cannot be decided from them is
 * decided at run time from `Shape` (see `DifferentiableGraph.sumTo`).
 */

/** The factors of a dimension: a numeric coefficient and a sorted list of named factors. */
interface Factors {
  coefficient: number;
  names: string[];
}

function factors(d: Dim): Factors {
  if (typeof d === 'number') return { coefficient: d, names: [] };
  let coefficient = 1;
  const names: string[] = [];
  for (const part of d.split('*')) {
    const n = Number(part);
    if (part !== '' && Number.isFinite(n)) coefficient *= n;
    else names.push(part);
  }
  return { coefficient, names: names.sort() };
}

function fromFactors(f: Factors): Dim {
  if (f.names.length === 0) return f.coefficient;
  return [...(f.coefficient === 1 ? [] : [String(f.coefficient)]), ...f.names].join('*');
}

/** A dimension in canonical form (`columns*2` -> `2*columns`). */
export function canonicalDim(d: Dim): Dim {
  return typeof d === 'number' ? d : fromFactors(factors(d));
}

export function isUnknown(d: Dim): boolean {
  return typeof d === 'string' && d.split('*').some((p) => p.startsWith('?'));
}

/** The product of dimensions, or undefined when an unknown dimension takes part. */
export function product(dims: Dim[]): Dim | undefined {
  if (dims.some(isUnknown)) return undefined;
  const all = dims.map(factors);
  return fromFactors({ coefficient: all.reduce((p, f) => p * f.coefficient, 1), names: all.flatMap((f) => f.names).sort() });
}

/** `numerator / denominator` when it divides exactly (symbolically), else undefined. */
export function quotient(numerator: Dim, denominator: Dim): Dim | undefined {
  if (isUnknown(numerator) || isUnknown(denominator)) return undefined;
  const n = factors(numerator);
  const d = factors(denominator);
  if (d.coefficient === 0 || n.coefficient % d.coefficient !== 0) return undefined;
  const names = [...n.names];
  for (const name of d.names) {
    const at = names.indexOf(name);
    if (at < 0) return undefined;
    names.splice(at, 1);
  }
  return fromFactors({ coefficient: n.coefficient / d.coefficient, names });
}

/** Creates unknown dimensions, each distinct. */
export class UnknownDims {
  private count = 0;
  next(): Dim {
    return `?${this.count++}`;
  }
}

/** numpy broadcasting of shapes; a pair of dimensions that cannot be decided statically gives an unknown one. */
export function broadcastShapes(shapes: Dim[][], unknown: UnknownDims): Dim[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out: Dim[] = [];
  for (let i = 0; i < rank; i++) {
    const dims = shapes.map((s) => s[s.length - rank + i]).filter((d): d is Dim => d !== undefined && d !== 1);
    const distinct = [...new Set(dims)];
    if (distinct.length === 0) out.push(1);
    else if (distinct.length === 1) out.push(distinct[0]!);
    else out.push(distinct.find((d) => typeof d === 'number') ?? unknown.next());
  }
  return out;
}

export function sameShape(a: Dim[], b: Dim[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** An axis in `[0, rank)` from a possibly negative one. */
export function normalizeAxis(axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new Error(`axis ${axis} is out of range for rank ${rank}`);
  return a;
}
