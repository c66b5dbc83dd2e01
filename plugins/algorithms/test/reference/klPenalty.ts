import { checkSameShape, unflatten, flattenMatrix, type Matrix } from '../../src/matrix.js';
import { unknownNameError } from '../../src/nameSuggestion.js';
import { KL_PENALTY_KINDS, type KlPenaltyKind } from '../../src/losses/klPenalty.js';

const k1 = (logp: number, ref: number): number => logp - ref;
const k2 = (logp: number, ref: number): number => 0.5 * (logp - ref) * (logp - ref);
/** Schulman's k3 (http://joschu.net/blog/kl-approx.html), clamped as in veRL `kl_penalty_forward`. */
const k3 = (logp: number, ref: number): number => {
  const d = Math.min(Math.max(ref - logp, -20), 20);
  return Math.min(Math.max(Math.exp(d) - d - 1, -10), 10);
};

const KL_KINDS: Record<KlPenaltyKind, (logp: number, ref: number) => number> = {
  k1,
  kl: k1,
  abs: (logp, ref) => Math.abs(logp - ref),
  k2,
  mse: k2,
  k3,
  low_var_kl: k3,
};

/** Per-token KL estimate between the policy and the reference, mirroring veRL `kl_penalty`. */
export function klPenalty(logProbs: Matrix, refLogProbs: Matrix, kind: KlPenaltyKind): number[][] {
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(KL_KINDS, kind)) {
    throw unknownNameError('kind', 'KL penalty kind', kind, KL_PENALTY_KINDS);
  }
  const { rows, cols } = checkSameShape(logProbs, 'logProbs', refLogProbs, 'refLogProbs');
  const logp = flattenMatrix(logProbs, 'logProbs').data;
  const ref = flattenMatrix(refLogProbs, 'refLogProbs', rows, cols).data;
  const f = KL_KINDS[kind];
  const out = new Float64Array(logp.length);
  for (let i = 0; i < out.length; i++) out[i] = f(logp[i]!, ref[i]!);
  return unflatten(out, rows, cols);
}
