import type { OptionalPluginSpec, Preset } from '@drmas/core';

/** The onnx engine as an optional plugin: onnxruntime-node, where it is installed. */
export const OPTIONAL_ONNX_ENGINE: OptionalPluginSpec = { name: 'backend-onnx', provides: { 'models.<id>.backend': ['onnx'] } };

/**
 * The tfjs engine as a preset's optional plugin (`optionalPlugins`): an optional peer dependency of the presets, so a
 * CPU install carries onnxruntime alone; a config that names tfjs without it is told to install it.
 */
export const OPTIONAL_TFJS_ENGINE: OptionalPluginSpec = { name: 'backend-tfjs', provides: { 'models.<id>.backend': ['tfjs'] } };

/**
 * drmas's own engines, each loaded where it is installed: what the commands that open a model without a config
 * (`drmas score`, `generate`, `tinker-server`) choose from, through the engine service as training does.
 */
export const LOCAL_ENGINES: Preset = {
  name: 'drmas:local-engines',
  optionalPlugins: [OPTIONAL_ONNX_ENGINE, OPTIONAL_TFJS_ENGINE],
};
