import { DrmasError } from '@drmas/core';

/** A tokenizer file that cannot be loaded, or a tokenizer used in a way it does not support. */
export class TokenizerError extends DrmasError {
  constructor(message: string, file?: string, hint?: string) {
    super('TOKENIZER_INVALID', message, {
      file,
      hint:
        hint ??
        (file === undefined
          ? undefined
          : 'the tokenizer must be a Hugging Face fast tokenizer (BPE or WordLevel) as tokenizer.save_pretrained() writes it'),
    });
  }
}
