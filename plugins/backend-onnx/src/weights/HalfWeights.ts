import { DrmasError, type WeightTensor } from '@drmas/core';
import { encodeF16 } from '@drmas/models';

/**
 * How an engine holds its weights on the host: `float32`, or `float16` (a frozen model: half the bytes, each weight
 * cast to float32 inside the graph where it is read).
 */
export const WEIGHT_PRECISIONS = ['float32', 'float16'] as const;
export type WeightPrecision = (typeof WEIGHT_PRECISIONS)[number];

/** A weight held as IEEE 754 binary16 bit patterns. */
export interface HalfTensor {
  shape: number[];
  data: Uint16Array;
}

/** The largest finite float16 value. */
export const FLOAT16_MAX = 65504;

/** A weight value float16 cannot hold: beyond `FLOAT16_MAX` once rounded, it would become infinite. */
export class Float16OverflowError extends DrmasError {
  constructor(tensor: string, index: number, value: number) {
    super('INVALID_ARGUMENT', `weight ${tensor} holds ${value} at index ${index}, beyond float16's range (+-${FLOAT16_MAX})`, {
      hint: 'hold this model in float32 (models.<id>.referencePrecision: float32, or weightPrecision: float32)',
    });
  }
}

/**
 * `tensor`'s values as float16, rounded to nearest with ties to even (PyTorch's `.half()`): exact for a bfloat16
 * value of magnitude 2^-14 to 65504 (bfloat16 has 8 significant bits, float16 11), a float16 subnormal below (within
 * 2^-25). A finite value that would round to infinity is refused, naming the tensor (`Float16OverflowError`).
 */
export function toFloat16(name: string, tensor: WeightTensor): HalfTensor {
  const data = encodeF16(tensor.data);
  for (let i = 0; i < data.length; i++) {
    if ((data[i]! & 0x7fff) === 0x7c00 && Number.isFinite(tensor.data[i]!)) throw new Float16OverflowError(name, i, tensor.data[i]!);
  }
  return { shape: tensor.shape, data };
}
