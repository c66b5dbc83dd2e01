import type { DecoderConfig } from '../config/ModelConfig.js';

// Module-level bindings: a global lookup of `Math` per call is slow inside vm contexts (jest).
const { cos: cosine, sin: sine, pow, PI } = Math;

/**
 * Inverse frequencies of the rotary embedding (`inv_freq` in transformers' `ROPE_INIT_FUNCTIONS`), in float64:
 * `1 / theta^(2i/d)`, then rescaled for `linear` and `llama3` rope scaling.
 */
export function rotaryInverseFrequencies(config: DecoderConfig): Float64Array {
  const dim = config.headDim;
  const invFreq = new Float64Array(dim / 2);
  for (let i = 0; i < dim / 2; i++) invFreq[i] = 1 / pow(config.ropeTheta, (2 * i) / dim);
  const scaling = config.ropeScaling;
  if (scaling?.type === 'linear') {
    for (let i = 0; i < invFreq.length; i++) invFreq[i] = invFreq[i]! / scaling.factor;
  } else if (scaling?.type === 'llama3') {
    const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: oldContext } = scaling;
    const lowFreqWavelen = oldContext / lowFreqFactor;
    const highFreqWavelen = oldContext / highFreqFactor;
    for (let i = 0; i < invFreq.length; i++) {
      const freq = invFreq[i]!;
      const wavelen = (2 * PI) / freq;
      if (wavelen > lowFreqWavelen) {
        invFreq[i] = freq / factor;
      } else if (wavelen >= highFreqWavelen) {
        const smooth = (oldContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
        invFreq[i] = (1 - smooth) * (freq / factor) + smooth * freq;
      }
    }
  }
  return invFreq;
}

/**
 * cos and signed sin tables `[positions.length, headDim]` for HF's rotate_half convention:
 * `rope(x) = x * cos + rotate_half(x) * sin` with `rotate_half(x) = [-x2, x1]`. Writing `rotate_half(x)` as
 * `swap_halves(x) * [-1.., +1..]`, the sign is folded into the sin table, so `rope(x) = x*cos + swap_halves(x)*sinSigned`.
 */
export function rotaryTables(invFreq: Float64Array, positions: ArrayLike<number>): { cos: Float32Array; sinSigned: Float32Array } {
  const half = invFreq.length;
  const dim = half * 2;
  const cos = new Float32Array(positions.length * dim);
  const sinSigned = new Float32Array(positions.length * dim);
  for (let p = 0; p < positions.length; p++) {
    const base = p * dim;
    const position = positions[p]!;
    for (let i = 0; i < half; i++) {
      const angle = position * invFreq[i]!;
      const c = cosine(angle);
      const s = sine(angle);
      cos[base + i] = c;
      cos[base + half + i] = c;
      sinSigned[base + i] = -s;
      sinSigned[base + half + i] = s;
    }
  }
  return { cos, sinSigned };
}
