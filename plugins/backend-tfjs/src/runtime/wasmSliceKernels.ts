import * as tf from '@tensorflow/tfjs-core';

/** The parts of tfjs-backend-wasm's backend object the slice kernels use. */
interface WasmBackend {
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
}

type KernelFunc = (args: { inputs: tf.NamedTensorInfoMap; attrs?: tf.NamedAttrMap; backend: unknown }) => tf.TensorInfo | tf.TensorInfo[];

/**
 * A slice that reads its input in place. tfjs-backend-wasm 4.22's Slice copies the WHOLE input out of the wasm heap
 * (`readSync`) on every call, and Unpack (`tf.unstack`) calls it once per output, so splitting a tensor into n parts
 * costs n full copies: for a training batch it was half of the forward pass's time.
 */
function sliceInPlace(x: tf.TensorInfo, begin: number[] | number, size: number[] | number, backend: WasmBackend): tf.TensorInfo {
  // parseSliceParams returns [begin, size], each with one entry per axis of x.
  const [start, extent] = tf.slice_util.parseSliceParams(x, begin, size) as [number[], number[]];
  const out = backend.makeOutput(extent, x.dtype);
  // Views are taken after makeOutput, which may grow (and so move) the heap.
  const source = backend.typedArrayFromHeap(x);
  const target = backend.typedArrayFromHeap(out);
  const strides = tf.util.computeStrides(x.shape);
  if (tf.slice_util.isSliceContinous(x.shape, start, extent)) {
    const offset = tf.slice_util.computeFlatOffset(start, strides);
    target.set(source.subarray(offset, offset + tf.util.sizeFromShape(extent)));
    return out;
  }
  const rank = x.shape.length;
  if (rank === 0 || tf.util.sizeFromShape(extent) === 0) return out;
  const last = extent[rank - 1]!;
  let written = 0;
  const copy = (axis: number, offset: number): void => {
    if (axis === rank - 1) {
      const from = offset + start[axis]!;
      target.set(source.subarray(from, from + last), written);
      written += last;
      return;
    }
    const count = extent[axis]!;
    const first = start[axis]!;
    const stride = strides[axis]!;
    for (let i = 0; i < count; i++) copy(axis + 1, offset + (first + i) * stride);
  };
  copy(0, 0);
  return out;
}

function replaceKernel(name: string, kernelFunc: KernelFunc): void {
  const original = tf.getKernel(name, 'wasm');
  if (!original) return;
  tf.unregisterKernel(name, 'wasm');
  tf.registerKernel({ ...original, kernelFunc: kernelFunc });
}

/** Replaces the wasm backend's Slice and Unpack kernels with ones that do not copy the whole input per call. */
export function installWasmSliceKernels(): void {
  const originalSlice = tf.getKernel('Slice', 'wasm')?.kernelFunc as KernelFunc | undefined;
  replaceKernel('Slice', (args) => {
    const x = args.inputs.x as tf.TensorInfo;
    if (x.dtype === 'string' && originalSlice) return originalSlice(args);
    const { begin, size } = args.attrs as { begin: number[] | number; size: number[] | number };
    return sliceInPlace(x, begin, size, args.backend as WasmBackend);
  });
  replaceKernel('Unpack', ({ inputs, attrs, backend }) => {
    const value = inputs.value as tf.TensorInfo;
    const rank = value.shape.length;
    const axis = ((attrs as { axis: number }).axis + rank) % rank;
    const outShape = value.shape.filter((_, i) => i !== axis);
    const begin = new Array<number>(rank).fill(0);
    const size = [...value.shape];
    size[axis] = 1;
    return Array.from({ length: value.shape[axis]! }, (_, i) => {
      begin[axis] = i;
      const out = sliceInPlace(value, begin, size, backend as WasmBackend);
      return { dataId: out.dataId, dtype: out.dtype, shape: outShape };
    });
  });
}
