/** A float32 tensor in host memory, row-major. */
export interface HostTensor {
  shape: number[];
  data: Float32Array;
}
