/** A safetensors file that cannot be read or written: names the file and, where known, the tensor. */
export class SafetensorsError extends Error {
  override name = 'SafetensorsError';
  constructor(
    readonly file: string,
    message: string,
    readonly tensor?: string,
  ) {
    super(`${file}${tensor === undefined ? '' : ` (tensor "${tensor}")`}: ${message}`);
  }
}

/** A checkpoint folder that is missing files, or holds files that disagree with each other. */
export class CheckpointError extends Error {
  override name = 'CheckpointError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

/** A tensor the model needs is missing from the checkpoint or has the wrong shape. */
export class TensorShapeError extends Error {
  override name = 'TensorShapeError';
  constructor(
    readonly tensor: string,
    readonly expectedShape: readonly number[],
    readonly foundShape: readonly number[] | undefined,
  ) {
    super(
      foundShape === undefined
        ? `checkpoint tensor "${tensor}" is missing (expected shape [${expectedShape.join(', ')}]); ` +
            'check that the checkpoint matches the model config (architecture, tied embeddings, layer count)'
        : `checkpoint tensor "${tensor}" has shape [${foundShape.join(', ')}], expected [${expectedShape.join(', ')}]; ` +
            'check that config.json matches the weights',
    );
  }
}
