import { PolicyLossFunction } from '@drmas/plugin-algorithms';

/** PPO's clipped surrogate as the trainer's tests use it: clip 0.2 both ways, dual clip 3, token-mean, no KL or entropy. */
export function vanillaPpoLoss(): PolicyLossFunction {
  return new PolicyLossFunction({
    variant: 'vanilla',
    clipRatioLow: 0.2,
    clipRatioHigh: 0.2,
    clipRatioC: 3,
    aggregation: 'token-mean',
    klCoef: 0,
    klType: 'low_var_kl',
    entropyCoef: 0,
  });
}
