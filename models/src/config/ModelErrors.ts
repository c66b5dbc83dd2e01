import { DrmasError } from '@drmas/core';

/** A `config.json` that cannot describe a supported decoder; `key` is the config.json key at fault. */
export class ModelConfigError extends DrmasError {
  constructor(message: string, details: { file?: string; key?: string; hint?: string } = {}) {
    super('CHECKPOINT_INVALID', message, {
      file: details.file,
      key: details.key,
      hint: details.hint ?? 'config.json must describe a Llama, Qwen2 or Qwen3 decoder as transformers saves it',
    });
  }
}

/** A weight tensor that is missing, or present with the wrong shape. Names the tensor and the shape expected. */
export class ModelWeightError extends DrmasError {
  constructor(
    readonly tensor: string,
    readonly expectedShape: number[],
    problem: string,
  ) {
    super('CHECKPOINT_INVALID', `weight '${tensor}' ${problem}; expected shape [${expectedShape.join(', ')}]`, {
      hint: 'check that the checkpoint matches its config.json',
    });
  }
}
