export {
  ARCHITECTURES,
  configJsonFor,
  expectedWeightShapes,
  isArchitectureName,
  parseModelConfig,
  type ArchitectureName,
  type DecoderConfig,
  type RopeScaling,
} from './config/ModelConfig.js';
export { ModelConfigError, ModelWeightError } from './config/ModelErrors.js';
export { activationBytesPerToken, keyValueBytesPerToken, matrixWeightCount, readModelShape, type ModelShape } from './config/modelShape.js';

export { CheckpointError, OptimizerStateError, SafetensorsError, TensorShapeError } from './checkpoint/errors.js';
export {
  bf16BitsToFloat,
  decodeBf16,
  decodeF16,
  encodeBf16,
  encodeF16,
  f16BitsToFloat,
  floatToBf16Bits,
  floatToF16Bits,
} from './checkpoint/halfFloat.js';
export {
  parseSafetensors,
  readSafetensors,
  readSafetensorsHeader,
  safetensorsChunks,
  serializeSafetensors,
  writeSafetensors,
  type CheckpointTensor,
  type ReadSafetensorsOptions,
  type SafetensorsContents,
  type SafetensorsDtype,
  type SafetensorsEntry,
  type SafetensorsHeader,
  type TensorInput,
  type TensorMapInput,
  type WritableDtype,
  type WriteSafetensorsOptions,
} from './checkpoint/safetensors.js';
export {
  readShardedSafetensors,
  SAFETENSORS_FILE,
  SAFETENSORS_INDEX_FILE,
  writeShardedSafetensors,
  type SafetensorsIndex,
  type ShardedWriteOptions,
  type ShardedWriteResult,
} from './checkpoint/shardedSafetensors.js';
export {
  CONFIG_FILE,
  expectTensor,
  GENERATION_CONFIG_FILE,
  isTemporaryCheckpointName,
  loadCheckpoint,
  saveCheckpoint,
  TOKENIZER_FILES,
  type CheckpointContents,
  type CheckpointFileContents,
  type CheckpointTokenizer,
  type LoadCheckpointOptions,
  type LoadedCheckpoint,
} from './checkpoint/checkpointDirectory.js';
export { CheckpointReader } from './checkpoint/CheckpointReader.js';
export {
  hasAdamWState,
  OPTIMIZER_META_FILE,
  OPTIMIZER_MAX_SHARD_SIZE,
  OPTIMIZER_STATE_FILE,
  OPTIMIZER_STATE_INDEX_FILE,
  isBlockwise,
  momentsIn,
  readAdamWState,
  serializeAdamWState,
  zeroMoments,
  type AdamWMoments,
  type AdamWState,
  type BlockwiseAdamWMoments,
  type HeldAdamWMoments,
} from './checkpoint/adamWStateFiles.js';
export {
  blockCount,
  dequantizeBlockwise,
  dynamicMap,
  emptyBlockwiseCodes,
  holdsBlockwise,
  mapSearch,
  quantizeBlockwise,
  BLOCKWISE_BLOCK_SIZE,
  BLOCKWISE_MIN_SIZE,
  BLOCKWISE_TINIEST_ABSMAX,
  MAP_SEARCH_BUCKETS,
  type BlockwiseCodes,
  type MapSearch,
} from './optimizer/blockwise8bit.js';

export { TokenizerError } from './tokenizer/errors.js';
export {
  Tokenizer,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
  type DecodeOptions,
  type EncodeOptions,
  type TokenizerSource,
} from './tokenizer/Tokenizer.js';
export type {
  AddedTokenJson,
  BpeModelJson,
  ComponentJson,
  SpecialTokenJson,
  TokenizerConfigJson,
  TokenizerJson,
  WordLevelModelJson,
} from './tokenizer/tokenizerJson.js';
export { StreamingDecoder } from './tokenizer/StreamingDecoder.js';
export { DEFAULT_CHAT_TEMPLATE, type ChatMessage, type ChatTemplateOptions, type ChatTemplateSetting } from './tokenizer/ChatTemplate.js';
// Tool-call text formats are core's (environments read them without the model layer); re-exported as before 0.2.0.
export {
  parseToolCallText,
  TOOL_CALL_FORMATS,
  TOOL_CALL_OPEN,
  toolCallFormatOf,
  type ParsedToolCall,
  type ToolCallBlock,
  type ToolCallFormat,
  type ToolCallParse,
} from '@drmas/core';
export { DEFAULT_SPECIAL_TOKENS, END_OF_TEXT, IM_END, IM_START, PAD, reservedTokenName } from './tokenizer/specialTokens.js';
export { trainByteLevelBpe, type TrainByteLevelBpeOptions } from './tokenizer/trainByteLevelBpe.js';
export { buildCharacterTokenizer, type CharacterTokenizerOptions } from './tokenizer/buildCharacterTokenizer.js';
export { GPT2_SPLIT_PATTERN } from './tokenizer/preTokenize.js';
export { translateRegex } from './tokenizer/regexTranslation.js';
export { byteLevelAlphabet, toByteLevel } from './tokenizer/byteLevel.js';

export {
  BUILTIN_MAX_POSITIONS,
  BUILTIN_MODELS,
  builtinConfigJson,
  builtinModel,
  builtinTokenizer,
  isBuiltinModelName,
  type BuiltinModelName,
  type BuiltinModelOptions,
} from './builtin/builtinModels.js';

export type { HostTensor } from './weights/HostTensor.js';
export { randomInitWeights } from './weights/randomInitWeights.js';
export {
  loadCriticTrunk,
  loadModelWeights,
  readModelFolder,
  type ModelFolder,
  type ModelSource,
  type ModelWeights,
} from './weights/loadModelWeights.js';

export { rowKeyForSeed, rowStreams, SeededRandom, seedForRowKey } from './decoding/SeededRandom.js';
export { rotaryInverseFrequencies, rotaryTables } from './decoding/rotaryEmbedding.js';
export { distinctSequences, leftPad, type DistinctSequences, type LeftPaddedBatch } from './decoding/batchLayout.js';
export { promptResponseLayout, type PromptResponseLayout } from './decoding/promptResponseLayout.js';
export {
  argmax,
  logProbAtTemperature,
  sampleToken,
  sampleWithLogProb,
  topLogProbs,
  type SampledToken,
  type SamplingSettings,
} from './decoding/sampling.js';
export {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  initLoraAdapter,
  loadLoraAdapter,
  loraAdapterFiles,
  loraModulePath,
  loraModuleShape,
  loraScaling,
  loraTensorNames,
  loraTensorShapes,
  mergeLoraAdapter,
  peftAdapterConfig,
  type LoadedLoraAdapter,
} from './lora/loraAdapter.js';

export {
  MicroBatcher,
  type MicroBatchOptions,
  type MicroBatchStats,
  type SampleRequest,
  type SampleResult,
} from './decoding/MicroBatcher.js';

export { generateCommand, CommandInputError, type GenerateCommandOptions } from './cli/generateCommand.js';
export { openPolicyBackend, type EngineOptions } from './cli/openPolicyBackend.js';
export { LOCAL_ENGINES, OPTIONAL_ONNX_ENGINE, OPTIONAL_TFJS_ENGINE } from './cli/localEngines.js';
export { scoreCommand, type ScoreCommandOptions } from './cli/scoreCommand.js';
