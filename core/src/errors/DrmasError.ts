/** Codes of the errors a user can cause; each names one way things go wrong. */
export type DrmasErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_LOAD_FAILED'
  | 'CONFIG_INVALID'
  | 'CONFIG_OVERRIDE_INVALID'
  | 'PLUGIN_NOT_FOUND'
  | 'PRESET_NOT_FOUND'
  | 'PLUGIN_LOAD_FAILED'
  | 'PRESET_LOAD_FAILED'
  | 'PLUGIN_INVALID'
  | 'PRESET_INVALID'
  | 'PLUGIN_FAILED'
  | 'PRESET_CYCLE'
  | 'DUPLICATE_PLUGIN'
  | 'DUPLICATE_NAME'
  | 'UNKNOWN_NAME'
  | 'MISSING_BINDING'
  | 'AMBIGUOUS_BINDING'
  | 'NO_ROLLOUT'
  | 'INVALID_ARGUMENT'
  | 'RUN_FAILED';

export interface DrmasErrorDetails {
  /** Config key path the error concerns, e.g. `trainer.steps` or `plugins[1]`. */
  key?: string;
  /** File the error concerns (a config file, a plugin module, a checkpoint). */
  file?: string;
  /** What the user can do about it. */
  hint?: string;
  cause?: unknown;
}

/** An error the user can cause and fix. The CLI prints `format()` and exits non-zero, without a stack trace. */
export class DrmasError extends Error {
  override readonly name = 'DrmasError';
  readonly code: DrmasErrorCode;
  readonly key?: string;
  readonly file?: string;
  readonly hint?: string;

  constructor(code: DrmasErrorCode, message: string, details: DrmasErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.key = details.key;
    this.file = details.file;
    this.hint = details.hint;
  }

  /** The message as shown to a person: where, what, and what to do. */
  format(): string {
    const where = [this.file, this.key].filter(Boolean).join(': ');
    const lines = [`error ${this.code}${where ? ` (${where})` : ''}: ${this.message}`];
    if (this.hint) lines.push(`  hint: ${this.hint}`);
    return lines.join('\n');
  }

  static is(value: unknown): value is DrmasError {
    return value instanceof Error && (value as { name?: string }).name === 'DrmasError' && 'code' in value;
  }
}
