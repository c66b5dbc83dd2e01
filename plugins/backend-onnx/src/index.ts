export {
  OnnxPolicyBackend,
  createOnnxPolicyBackend,
  createPolicyBackend,
  type OnnxBackendOptions,
  type OnnxEngineOptions,
} from './OnnxPolicyBackend.js';
export {
  detectCuda,
  loadOnnxRuntime,
  parseProviderRequest,
  resolveProvider,
  CUDA_INSTALL_HINT,
  ONNXRUNTIME_INSTALL,
  ONNXRUNTIME_VERSION,
  PROVIDER_REQUESTS,
  type CudaAvailability,
  type ProviderRequest,
  type ResolvedProvider,
} from './ExecutionProvider.js';
export { buildDecoderGraph, GraphNames, type DecoderGraphKind, type WeightMode } from './DecoderGraph.js';
export { GraphBuilder, OPSET, type Dim, type ElementType } from './onnx/GraphBuilder.js';
export { ProtobufWriter } from './onnx/ProtobufWriter.js';
export {
  OnnxBackendDisposedError,
  OnnxRequestError,
  OnnxRuntimeUnavailableError,
  OnnxTrainingUnsupportedError,
  OnnxWeightMismatchError,
} from './OnnxBackendErrors.js';
export { default, OnnxBackendPlugin, onnxBackendFactory } from './plugin/OnnxBackendPlugin.js';
