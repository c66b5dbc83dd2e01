import { DrmasError } from '@drmas/core';

/** A safetensors file that cannot be read or written: `file` is the file and, where known, `tensor` the tensor. */
export class SafetensorsError extends DrmasError {
  declare readonly file: string;

  constructor(
    file: string,
    message: string,
    readonly tensor?: string,
    hint = 'the file is damaged or is not safetensors: download or save the checkpoint again',
  ) {
    super('CHECKPOINT_INVALID', `${tensor === undefined ? '' : `tensor "${tensor}": `}${message}`, { file, hint });
  }
}

/** A checkpoint folder that is missing files, or holds files that disagree with each other; `path` is the folder or file. */
export class CheckpointError extends DrmasError {
  constructor(
    readonly path: string,
    message: string,
    hint = 'a checkpoint is a Hugging Face model folder: config.json and model.safetensors (or model.safetensors.index.json and its shards)',
  ) {
    super('CHECKPOINT_INVALID', message, { file: path, hint });
  }
}

/** A tensor the model needs is missing from the checkpoint or has the wrong shape. */
export class TensorShapeError extends DrmasError {
  constructor(
    readonly tensor: string,
    readonly expectedShape: readonly number[],
    readonly foundShape: readonly number[] | undefined,
  ) {
    super(
      'CHECKPOINT_INVALID',
      foundShape === undefined
        ? `checkpoint tensor "${tensor}" is missing (expected shape [${expectedShape.join(', ')}])`
        : `checkpoint tensor "${tensor}" has shape [${foundShape.join(', ')}], expected [${expectedShape.join(', ')}]`,
      {
        hint:
          foundShape === undefined
            ? 'check that the checkpoint matches the model config (architecture, tied embeddings, layer count)'
            : 'check that config.json matches the weights',
      },
    );
  }
}

/** Optimizer state of a checkpoint (`optimizer.json`, `optimizer.safetensors`) that is missing or does not fit the model. */
export class OptimizerStateError extends DrmasError {
  constructor(
    file: string,
    message: string,
    hint = 'resume from a checkpoint saved with its optimizer state ({ optimizer: true }) by this model',
  ) {
    super('CHECKPOINT_INVALID', message, { file, hint });
  }
}
