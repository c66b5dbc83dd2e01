export {
  OnnxPolicyBackend,
  createOnnxPolicyBackend,
  createPolicyBackend,
  type OnnxBackendOptions,
  type OnnxEngineOptions,
} from './OnnxPolicyBackend.js';
export {
  detectCuda,
  detectWebGpu,
  loadOnnxRuntime,
  parseProviderRequest,
  resolveProvider,
  CUDA_INSTALL_HINT,
  WEBGPU_INSTALL_HINT,
  ONNXRUNTIME_INSTALL,
  ONNXRUNTIME_VERSION,
  PROVIDER_REQUESTS,
  type ProviderAvailability,
  type ProviderName,
  type ProviderRequest,
  type ResolvedProvider,
} from './ExecutionProvider.js';
export { buildDecoderGraph, GraphNames, type DecoderGraphKind, type WeightMode } from './DecoderGraph.js';
export { GraphBuilder, OPSET, type Dim, type ElementType } from './onnx/GraphBuilder.js';
export { ProtobufWriter } from './onnx/ProtobufWriter.js';
export { OnnxBackendDisposedError, OnnxRequestError, OnnxRuntimeUnavailableError, OnnxWeightMismatchError } from './OnnxBackendErrors.js';
export {
  FLOAT16_MAX,
  Float16OverflowError,
  toFloat16,
  WEIGHT_PRECISIONS,
  type HalfTensor,
  type WeightPrecision,
} from './weights/HalfWeights.js';
export { default, OnnxBackendPlugin, createOnnxBackendFactory, referencePrecision } from './plugin/OnnxBackendPlugin.js';
export { DifferentiableGraph, type NodeRecord, type ValueInfo, type ValueType } from './training/DifferentiableGraph.js';
export { OP_RULES, type OpRule } from './training/OpRules.js';
export { onnxTensorOps } from './training/OnnxTensorOps.js';
export { buildTrainingGraph, TrainingNames, type TrainingGraph, type TrainingGraphOptions } from './training/TrainingGraph.js';
export { OnnxTrainer, type GradientRequest, type GradientResult } from './training/OnnxTrainer.js';
export { HostAdamW } from './training/HostAdamW.js';
export { AdamWKernel, type AdamWScalars } from './training/AdamWKernel.js';
export {
  defaultWeightLayout,
  graphWeights,
  graphWeightSources,
  SHARED_LAYOUT_BYTES,
  WEIGHT_LAYOUTS,
  type GraphWeightSource,
  type WeightLayout,
} from './GraphWeights.js';
export { OnnxValueModel, VALUE_HEAD_FILE, type CriticDecoder, type OnnxCriticTrunk } from './critic/OnnxValueModel.js';
export { buildValueGraph, ValueNames, type ValueGraph } from './critic/ValueGraph.js';
export { accumulateGradients, clippedAdamWStep, type ClippedStep } from './training/ClippedStep.js';
