export * from './errors.js';
export * from './halfFloat.js';
export * from './safetensors.js';
export * from './shardedSafetensors.js';
export * from './checkpointDirectory.js';
export * from './CheckpointReader.js';
