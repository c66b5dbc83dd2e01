/** A tokenizer file that cannot be loaded, or a tokenizer used in a way it does not support. */
export class TokenizerError extends Error {
  override name = 'TokenizerError';
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(file === undefined ? message : `${file}: ${message}`);
  }
}
