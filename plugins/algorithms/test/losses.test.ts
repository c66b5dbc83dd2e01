import { AlgorithmInputError } from '../src/index.js';
import { aggregateLoss } from './reference/aggregateLoss.js';
import { entropyFromLogits } from './reference/entropy.js';
import { klPenalty } from './reference/klPenalty.js';
import { policyLoss } from './reference/policyLoss.js';
import { valueLoss } from './reference/valueLoss.js';
import { expectClose, expectMatrixClose } from './closeTo.js';

describe('policyLoss (hand-worked)', () => {
  // Token 0: A = -1, ratio 4: l1 = 4, l2 = 1 * 1.2 = 1.2, c1 = 4; dual clip -A c = 3 -> loss 3 (lower clip hit).
  // Token 1: A = 1, ratio 1.5: l1 = -1.5, l2 = -1.2 (clipped, l2 > l1), c1 = -1.2.
  // Token 2 is masked.
  const input = {
    logProbs: [[Math.log(4) - 1, Math.log(1.5) - 2, 5]],
    oldLogProbs: [[-1, -2, 0]],
    advantages: [[-1, 1, 7]],
    responseMask: [[1, 1, 0]],
  };

  it('vanilla with dual clip', () => {
    const out = policyLoss(input);
    expectClose(out.loss, (3 - 1.2) / 2, 1e-12);
    expectClose(out.clipFraction, 1 / (2 + 1e-8), 1e-12);
    expectClose(out.clipFractionLower, 1 / (2 + 1e-8), 1e-12);
    expectClose(out.approxKl, -(Math.log(4) + Math.log(1.5)) / (2 + 1e-8), 1e-12);
  });

  it('dual clip bound c changes the capped negative-advantage loss', () => {
    // c = 5 > ratio 4: no lower clip, token 0 keeps 4.
    const out = policyLoss(input, { clipRatioC: 5 });
    expectClose(out.loss, (4 - 1.2) / 2, 1e-12);
    expectClose(out.clipFractionLower, 0, 0);
  });

  it('clip-higher: a high bound of 0.6 leaves ratio 1.5 unclipped', () => {
    const out = policyLoss(input, { clipRatioLow: 0.2, clipRatioHigh: 0.6 });
    expectClose(out.loss, (3 - 1.5) / 2, 1e-12);
    expectClose(out.clipFraction, 0, 0);
  });

  it('importance weights multiply the clipped per-token loss', () => {
    const out = policyLoss({ ...input, importanceWeights: [[0.5, 2, 100]] });
    expectClose(out.loss, (3 * 0.5 - 1.2 * 2) / 2, 1e-12);
  });

  it('gpg: -logp A', () => {
    const out = policyLoss(
      { logProbs: [[-0.5, -2]], oldLogProbs: [[-0.5, -2]], advantages: [[2, -1]], responseMask: [[1, 1]] },
      { variant: 'gpg' },
    );
    expectClose(out.loss, (1 + -2) / 2, 1e-12);
  });

  it('cispo: -clip(ratio) A logp', () => {
    // ratio e^1 = 2.718 clipped to 1.2; A = 1; logp = -1: loss 1.2.
    const out = policyLoss({ logProbs: [[-1]], oldLogProbs: [[-2]], advantages: [[1]], responseMask: [[1]] }, { variant: 'cispo' });
    expectClose(out.loss, 1.2, 1e-12);
    expectClose(out.clipFraction, 1 / (1 + 1e-8), 1e-12);
  });

  it('gspo: one sequence ratio per row', () => {
    // mean log-ratio over the mask (0.1 + 0.3) / 2 = 0.2 -> ratio e^0.2 = 1.2214 for every token; A = 1 -> clipped to 1.2.
    const out = policyLoss(
      { logProbs: [[0.1, 0.3, 9]], oldLogProbs: [[0, 0, 0]], advantages: [[1, 1, 1]], responseMask: [[1, 1, 0]] },
      { variant: 'gspo' },
    );
    expectClose(out.loss, (-1.2 * 2) / (2 + 1e-8), 1e-12);
  });

  it('rejects a dual-clip bound <= 1 and unknown variants', () => {
    const e = (() => {
      try {
        policyLoss(input, { clipRatioC: 1 });
      } catch (err) {
        return err as AlgorithmInputError;
      }
      throw new Error('no throw');
    })();
    expect(e).toBeInstanceOf(AlgorithmInputError);
    expect(e.key).toBe('options.clipRatioC');
    expect(() => policyLoss(input, { variant: 'gspoo' as never })).toThrow('Did you mean "gspo"?');
    expect(() => policyLoss({ ...input, advantages: [[1, 2]] })).toThrow(/advantages/);
  });
});

describe('aggregateLoss (hand-worked)', () => {
  // Row 0 has a hole, row 2 is empty. Masked values: row 0: 1, 3; row 1: 4, 5.
  const loss = [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
  ];
  const mask = [
    [1, 0, 1],
    [1, 1, 0],
    [0, 0, 0],
  ];
  it('token-mean: 13 / 4', () => expectClose(aggregateLoss(loss, mask, 'token-mean'), 3.25, 1e-15));
  it('seq-mean-token-sum: (4 + 9) / 2 non-empty rows', () => expectClose(aggregateLoss(loss, mask, 'seq-mean-token-sum'), 6.5, 1e-15));
  it('seq-mean-token-mean: (4/2 + 9/2) / 2', () => expectClose(aggregateLoss(loss, mask, 'seq-mean-token-mean'), 3.25, 1e-8));
  it('seq-mean-token-sum-norm: 13 / L, or 13 / lossScaleFactor', () => {
    expectClose(aggregateLoss(loss, mask, 'seq-mean-token-sum-norm'), 13 / 3, 1e-15);
    expectClose(aggregateLoss(loss, mask, 'seq-mean-token-sum-norm', { lossScaleFactor: 2 }), 6.5, 1e-15);
  });
  it('fractional mask entries weight the tokens', () => expectClose(aggregateLoss([[2, 4]], [[0.5, 1]], 'token-mean'), 5 / 1.5, 1e-15));
  it('rejects unknown modes and bad scale factors', () => {
    expect(() => aggregateLoss(loss, mask, 'token_mean' as never)).toThrow('Did you mean "token-mean"?');
    expect(() => aggregateLoss(loss, mask, 'seq-mean-token-sum-norm', { lossScaleFactor: 0 })).toThrow(AlgorithmInputError);
  });
});

describe('klPenalty (hand-worked)', () => {
  // logp = -1, ref = -2: d = logp - ref = 1.
  it.each([
    ['k1', 1],
    ['kl', 1],
    ['abs', 1],
    ['k2', 0.5],
    ['mse', 0.5],
    // k3: x = ref - logp = -1 -> e^-1 + 1 - 1 = e^-1.
    ['k3', Math.exp(-1)],
    ['low_var_kl', Math.exp(-1)],
  ] as const)('%s', (kind, expected) => {
    expectMatrixClose(klPenalty([[-1]], [[-2]], kind), [[expected]], 1e-15);
  });
  it('abs is |logp - ref| when negative; k3 clamps at 10', () => {
    expectMatrixClose(klPenalty([[-2]], [[-1]], 'abs'), [[1]], 0);
    expectMatrixClose(klPenalty([[-30]], [[0]], 'k3'), [[10]], 0);
  });
  it('rejects unknown kinds', () => expect(() => klPenalty([[0]], [[0]], 'k4' as never)).toThrow(/k1/));
});

describe('valueLoss (hand-worked)', () => {
  it('0.5 * aggregate of the larger of clipped and unclipped squared errors', () => {
    // Token 0: v = 1, old = 0.5, R = 2, c = 0.2: clipped v = 0.7; (1-2)^2 = 1 < (0.7-2)^2 = 1.69 -> 1.69, clipped.
    // Token 1: v = 0.6 within 0.5 +- 0.2; (0.6)^2 = 0.36 both. Token 2 masked.
    const out = valueLoss(
      { values: [[1, 0.6, 50]], oldValues: [[0.5, 0.5, 0]], returns: [[2, 0, 0]], responseMask: [[1, 1, 0]] },
      { clipRange: 0.2, aggregation: 'token-mean' },
    );
    expectClose(out.loss, (0.5 * (1.69 + 0.36)) / 2, 1e-12);
    expectClose(out.clipFraction, 1 / (2 + 1e-8), 1e-12);
  });
});

describe('entropyFromLogits (hand-worked)', () => {
  it('uniform logits give ln V; p = (1/4, 3/4) gives -(p ln p) summed', () => {
    const out = entropyFromLogits([
      [
        [0, 0, 0, 0],
        [0, Math.log(3)],
      ],
      [[1000, 1000]],
    ]);
    expectMatrixClose(out, [[Math.log(4), -(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75))], [Math.log(2)]], 1e-12);
  });
});
