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
  | 'RUN_FAILED'
  /** A model checkpoint (config.json, safetensors weights, optimizer state) that is missing, damaged or does not fit the model. */
  | 'CHECKPOINT_INVALID'
  /** A tokenizer (tokenizer.json, tokenizer_config.json, a chat template) that cannot be loaded or cannot do what is asked. */
  | 'TOKENIZER_INVALID'
  /** A dataset file (tasks, questions, a corpus) that cannot be read or has a malformed record. */
  | 'DATASET_INVALID'
  /** A compute runtime (a tfjs backend package) that is not installed or does not start. */
  | 'RUNTIME_UNAVAILABLE'
  /** A service the config points at (a retriever server) that is unreachable, rejects requests or answers nonsense. */
  | 'SERVICE_FAILED'
  /** A batch the compute runtime's memory cannot hold (wasm's heap stops at 4 GiB). */
  | 'OUT_OF_MEMORY'
  /** A size or count setting beyond what the run can hold (the model's positions, the memory budget, the task source). */
  | 'LIMIT_EXCEEDED'
  /** An output path (run directory, report, checkpoint folder) that cannot be created or written. */
  | 'OUTPUT_UNWRITABLE'
  /** A run directory another drmas process is writing (its `run.lock` names the process). */
  | 'RUN_DIR_IN_USE';

export interface DrmasErrorDetails {
  /** Config key path the error concerns, e.g. `trainer.steps` or `plugins[1]`. */
  key?: string;
  /** File the error concerns (a config file, a plugin module, a checkpoint). */
  file?: string;
  /** What the user can do about it. */
  hint?: string;
  cause?: unknown;
}

/**
 * Marks DrmasErrors for `is`: `instanceof` fails across two copies of this module in one process (jest's source copy
 * and a plugin's dist copy), while a registered symbol is the same in both.
 */
const BRAND = Symbol.for('@drmas/core:DrmasError');

/**
 * An error the user can cause and fix. The CLI prints `format()` and exits non-zero, without a stack trace.
 * Subclasses keep their own class name as `name` (`TokenizerError: ...` in a stack trace).
 */
export class DrmasError extends Error {
  override readonly name: string;
  readonly code: DrmasErrorCode;
  readonly key?: string;
  readonly file?: string;
  readonly hint?: string;

  constructor(code: DrmasErrorCode, message: string, details: DrmasErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
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

  /**
   * The same error located at `key`, a config key or CLI option its thrower could not know (`models.policy.model`,
   * `--model`); the file and key it named move into the message. `context` prefixes the message.
   */
  at(key: string, context?: string): DrmasError {
    const where = [this.file, this.key].filter(Boolean).join(': ');
    const message = [context, where, this.message].filter(Boolean).join(': ');
    return new DrmasError(this.code, message, { key, hint: this.hint, cause: this });
  }

  /** The same error naming `file` (the config file its key is set in) where it named no file. */
  locatedIn(file: string | undefined): DrmasError {
    if (this.file !== undefined || file === undefined) return this;
    return new DrmasError(this.code, this.message, { key: this.key, file, hint: this.hint, cause: this });
  }

  /** Whether `value` is a DrmasError of any copy of @drmas/core, a subclass included. */
  static is(value: unknown): value is DrmasError {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }
}

Object.defineProperty(DrmasError.prototype, BRAND, { value: true });
