import { DrmasError } from '@drmas/core';

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

/** A dataset file that cannot be read as math tasks. Names the file, line or record, key, and the fix. */
export class MathDatasetError extends DrmasError {
  declare readonly file: string;
  readonly line?: number;
  readonly record?: number;
  readonly field?: string;

  constructor(problem: string, details: MathDatasetErrorDetails) {
    const where = details.line !== undefined ? `line ${details.line}: ` : details.record !== undefined ? `record ${details.record}: ` : '';
    super('DATASET_INVALID', `${where}${problem}`, { file: details.file, hint: details.hint, cause: details.cause });
    this.line = details.line;
    this.record = details.record;
    this.field = details.field;
  }
}

/** Invalid options or arguments given to a task source; `option` names the one at fault, e.g. `levels` or `cursor`. */
export class MathTaskSourceError extends DrmasError {
  constructor(
    message: string,
    readonly option: string,
  ) {
    super('INVALID_ARGUMENT', message);
  }
}
