/**
 * Thrown for invalid inputs or options. `key` names the offending input field or option
 * (e.g. `responseMask`, `options.clipRatioC`), so callers can map it onto their own error types.
 */
export class AlgorithmInputError extends Error {
  readonly key: string;

  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'AlgorithmInputError';
    this.key = key;
  }
}
