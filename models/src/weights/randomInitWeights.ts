import { expectedWeightShapes, type DecoderConfig } from '../config/ModelConfig.js';
import { SeededRandom } from '../decoding/SeededRandom.js';
import type { HostTensor } from './HostTensor.js';

/**
 * Fresh weights like transformers' `_init_weights`: normal(0, initializer_range), norms 1, biases 0. One seed gives
 * the same bits on every engine (the tensors are drawn in `expectedWeightShapes` order from one stream).
 */
export function randomInitWeights(config: DecoderConfig, seed: number): Map<string, HostTensor> {
  const rng = new SeededRandom(seed);
  const tensors = new Map<string, HostTensor>();
  for (const [name, shape] of expectedWeightShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else if (!name.endsWith('.bias')) rng.fillNormal(data, config.initializerRange);
    tensors.set(name, { shape, data });
  }
  return tensors;
}
