/**
 * A team value Q_tot mixed from per-agent values V_1..V_n at one joint step, and how it moves with each of them. VDN and
 * QMIX both implement it; the team credit (`teamCredit.ts`) reads only this.
 */
export interface ValueMixer {
  readonly kind: 'vdn' | 'qmix';
  readonly agents: number;
  /** Q_tot(V; s) and w_k = dQ_tot/dV_k (>= 0 for both mixers) at the per-agent values `values` in state embedding `state`. */
  mix(values: ArrayLike<number>, state: ArrayLike<number>): MixedValue;
}

export interface MixedValue {
  total: number;
  /** dQ_tot/dV_k for each agent k. */
  weights: Float64Array;
}

/** One joint step the mixer learns from: the agents' values there, the state embedding, and the team's TD(lambda) target. */
export interface MixerSample {
  values: ArrayLike<number>;
  state: ArrayLike<number>;
  target: number;
}

/** VDN (Sunehag et al. 2018): Q_tot = sum_k V_k, so every w_k is 1; nothing of its own to learn. */
export class VdnMixer implements ValueMixer {
  readonly kind = 'vdn';

  constructor(readonly agents: number) {}

  mix(values: ArrayLike<number>): MixedValue {
    let total = 0;
    for (let k = 0; k < this.agents; k++) total += values[k]!;
    return { total, weights: new Float64Array(this.agents).fill(1) };
  }
}
