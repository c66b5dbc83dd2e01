export interface MathDatasetErrorDetails {
  file: string;
  /** 1-based line of a JSONL file. */
  line?: number;
  /** 0-based position of the record in a JSON array. */
  record?: number;
  /** The record key the error concerns. */
  field?: string;
  /** What the user can do about it. */
  hint?: string;
  cause?: unknown;
}

/** A dataset file that cannot be read as math tasks. The message names the file, line or record, key, and the fix. */
export class MathDatasetError extends Error {
  override readonly name = 'MathDatasetError';
  readonly file: string;
  readonly line?: number;
  readonly record?: number;
  readonly field?: string;
  readonly hint?: string;

  constructor(problem: string, details: MathDatasetErrorDetails) {
    const where =
      details.line !== undefined
        ? `${details.file}:${details.line}`
        : details.record !== undefined
          ? `${details.file} (record ${details.record})`
          : details.file;
    super(`${where}: ${problem}${details.hint ? `. ${details.hint}` : ''}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.file = details.file;
    this.line = details.line;
    this.record = details.record;
    this.field = details.field;
    this.hint = details.hint;
  }
}

/** Invalid options or arguments given to a task source. */
export class MathTaskSourceError extends Error {
  override readonly name = 'MathTaskSourceError';

  constructor(
    message: string,
    /** The option or argument at fault, e.g. `levels` or `cursor`. */
    readonly option: string,
  ) {
    super(message);
  }
}
