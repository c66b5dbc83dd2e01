import protobuf from 'protobufjs';
import type { Datum, TensorData } from './tinkerWire.js';

/**
 * The part of hosted Tinker's public protobuf schema (`tinker_public.proto`, package `tinker_public`) that a
 * `forward_backward` carries, as the tinker SDK 0.38.0 ships it (`tinker/proto/tinker_public_pb2.py`; field numbers
 * and types read from its descriptor). Encoded as `tinker/proto/request_conv.py` does: tokens as little-endian int32
 * bytes, dense tensors as little-endian bytes of their dtype, `seq_id` always set.
 */
const SCHEMA = {
  nested: {
    tinker_public: {
      nested: {
        DType: { values: { DTYPE_UNSPECIFIED: 0, DTYPE_FLOAT32: 1, DTYPE_INT64: 2, DTYPE_INT32: 3, DTYPE_BFLOAT16: 4 } },
        Tensor: {
          oneofs: { data: { oneof: ['dense'] } },
          fields: {
            dense: { type: 'bytes', id: 1 },
            dtype: { type: 'DType', id: 3 },
            shape: { rule: 'repeated', type: 'int64', id: 4 },
          },
        },
        EncodedTextChunk: { fields: { tokens: { type: 'bytes', id: 1 } } },
        Chunk: {
          oneofs: { chunk: { oneof: ['encoded_text'] } },
          fields: { encoded_text: { type: 'EncodedTextChunk', id: 1 } },
        },
        Datum: {
          fields: {
            model_input: { rule: 'repeated', type: 'Chunk', id: 1 },
            loss_fn_inputs: { keyType: 'string', type: 'Tensor', id: 2 },
          },
        },
        ForwardBackwardRequest: {
          fields: {
            model_id: { type: 'string', id: 1 },
            seq_id: { type: 'int32', id: 2 },
            data: { rule: 'repeated', type: 'Datum', id: 3 },
            loss_fn: { type: 'string', id: 4 },
            loss_fn_config: { keyType: 'string', type: 'double', id: 5 },
            forward_only: { type: 'bool', id: 6 },
          },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(SCHEMA);
const ForwardBackwardRequest = root.lookupType('tinker_public.ForwardBackwardRequest');
const DTYPE = { float32: 1, int64: 2 } as const;

/** The content type the SDK sends a protobuf `forward_backward` under. */
export const PROTOBUF_CONTENT_TYPE = 'application/x-protobuf';

/** A `forward_backward` (or, with `forwardOnly`, a forward) as the fields the proto carries. */
export interface ForwardBackwardMessage {
  model_id: string;
  seq_id: number;
  data: Datum[];
  loss_fn: string;
  forward_only: boolean;
}

/** The bytes of a `tinker_public.ForwardBackwardRequest`. */
export function encodeForwardBackward(message: ForwardBackwardMessage): Uint8Array {
  return ForwardBackwardRequest.encode(
    ForwardBackwardRequest.fromObject({
      model_id: message.model_id,
      seq_id: message.seq_id,
      loss_fn: message.loss_fn,
      forward_only: message.forward_only,
      data: message.data.map((datum) => ({
        model_input: datum.model_input.chunks.map((chunk) => ({ encoded_text: { tokens: littleEndian(Int32Array.from(chunk.tokens)) } })),
        loss_fn_inputs: Object.fromEntries(Object.entries(datum.loss_fn_inputs).map(([name, tensor]) => [name, encodeTensor(tensor)])),
      })),
    }),
  ).finish();
}

interface DecodedTensor {
  dense?: Uint8Array;
  dtype?: number;
  shape?: number[];
}

interface DecodedRequest {
  model_id?: string;
  seq_id?: number;
  loss_fn?: string;
  forward_only?: boolean;
  data?: Array<{ model_input?: Array<{ encoded_text?: { tokens?: Uint8Array } }>; loss_fn_inputs?: Record<string, DecodedTensor> }>;
}

/** A `tinker_public.ForwardBackwardRequest` (as the SDK encodes it) back into the JSON wire's fields; throws on bytes that are not one. */
export function decodeForwardBackward(bytes: Uint8Array): ForwardBackwardMessage {
  const decoded = ForwardBackwardRequest.toObject(ForwardBackwardRequest.decode(bytes), {
    longs: Number,
    defaults: true,
    arrays: true,
    objects: true,
  }) as DecodedRequest;
  return {
    model_id: decoded.model_id ?? '',
    seq_id: decoded.seq_id ?? 0,
    loss_fn: decoded.loss_fn ?? '',
    forward_only: decoded.forward_only ?? false,
    data: (decoded.data ?? []).map((datum) => ({
      model_input: {
        chunks: (datum.model_input ?? []).map((chunk) => {
          if (!chunk.encoded_text) throw new Error('only encoded_text chunks are read');
          return { type: 'encoded_text' as const, tokens: Array.from(int32s(chunk.encoded_text.tokens ?? new Uint8Array())) };
        }),
      },
      loss_fn_inputs: Object.fromEntries(
        Object.entries(datum.loss_fn_inputs ?? {}).map(([name, tensor]) => [name, decodeTensor(name, tensor)]),
      ),
    })) as Datum[],
  };
}

function encodeTensor(tensor: TensorData): DecodedTensor {
  const dense = tensor.dtype === 'int64' ? BigInt64Array.from(tensor.data, (v) => BigInt(v)) : Float32Array.from(tensor.data);
  return { dense: littleEndian(dense), dtype: DTYPE[tensor.dtype], shape: tensor.shape ?? [tensor.data.length] };
}

function decodeTensor(name: string, tensor: DecodedTensor): TensorData {
  const dtype = tensor.dtype === DTYPE.int64 ? 'int64' : tensor.dtype === DTYPE.float32 ? 'float32' : undefined;
  if (!dtype || !tensor.dense) throw new Error(`loss_fn_inputs.${name}: only dense float32 and int64 tensors are read`);
  const bytes = new Uint8Array(tensor.dense); // a copy, aligned: protobufjs hands out views of a shared Buffer
  const data =
    dtype === 'int64'
      ? Array.from(new BigInt64Array(bytes.buffer, 0, bytes.byteLength / 8), Number)
      : Array.from(new Float32Array(bytes.buffer, 0, bytes.byteLength / 4));
  return { data, dtype, shape: tensor.shape };
}

/** The array's bytes, little-endian (every platform Node runs on here is, as numpy's `tobytes` on x86 and arm). */
function littleEndian(values: Int32Array | Float32Array | BigInt64Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

function int32s(bytes: Uint8Array): Int32Array {
  const copy = new Uint8Array(bytes);
  return new Int32Array(copy.buffer, 0, copy.byteLength / 4);
}
