import { DrmasError } from '@drmas/core';

/** A generation or scoring request the engine cannot serve as given. */
export class OnnxRequestError extends DrmasError {
  constructor(message: string, hint?: string) {
    super('INVALID_ARGUMENT', message, { hint });
  }
}

/** Weights handed to `syncWeights` or `load` that do not fit the graphs this engine built. */
export class OnnxWeightMismatchError extends DrmasError {
  constructor(detail: string) {
    super('CHECKPOINT_INVALID', `cannot take these weights: ${detail}`, {
      hint: "the onnx engine's graphs are built for one model shape; create a new onnx backend for a different model",
    });
  }
}

/** The backend was used after `dispose()`: a bug of the caller, not something a user can fix. */
export class OnnxBackendDisposedError extends Error {
  constructor(name: string) {
    super(`policy backend '${name}' was disposed; create a new one`);
    this.name = 'OnnxBackendDisposedError';
  }
}

/** onnxruntime-node, an optional peer dependency, is not installed (or its native library does not load). */
export class OnnxRuntimeUnavailableError extends Error {
  constructor(cause: unknown, install: string) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      /Cannot find (package|module) 'onnxruntime-node'/.test(detail)
        ? `onnxruntime-node is not installed (${install})`
        : `onnxruntime-node did not load: ${detail.split('\n')[0]}`,
      { cause },
    );
    this.name = 'OnnxRuntimeUnavailableError';
  }
}
