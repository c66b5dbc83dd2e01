import type { TensorOps } from '@drmas/core';

/** veRL's `kl_penalty` estimators of the KL to the reference policy (`k1`/`kl`, `abs`, `k2`/`mse`, `k3`/`low_var_kl`). */
export const KL_PENALTY_KINDS = Object.freeze(['k1', 'kl', 'abs', 'k2', 'mse', 'k3', 'low_var_kl'] as const);
export type KlPenaltyKind = (typeof KL_PENALTY_KINDS)[number];

/** Per-token KL estimate between the policy's log-probs and the reference's, as veRL `kl_penalty_forward` clamps it. */
export function klTerm<T>(ops: TensorOps<T>, logp: T, ref: T, kind: KlPenaltyKind): T {
  switch (kind) {
    case 'k1':
    case 'kl':
      return ops.sub(logp, ref);
    case 'abs':
      return ops.abs(ops.sub(logp, ref));
    case 'k2':
    case 'mse':
      return ops.mul(ops.square(ops.sub(logp, ref)), 0.5);
    case 'k3':
    case 'low_var_kl': {
      const d = ops.clip(ops.sub(ref, logp), -20, 20);
      return ops.clip(ops.sub(ops.sub(ops.exp(d), d), 1), -10, 10);
    }
  }
}
