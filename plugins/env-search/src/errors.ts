import { DrmasError, type DrmasErrorCode } from '@drmas/core';

/** Base class of the errors this package throws; `instanceof SearchEnvError` catches them all. */
export class SearchEnvError extends DrmasError {
  constructor(code: DrmasErrorCode, message: string, details: { hint?: string; file?: string; cause?: unknown } = {}) {
    super(code, message, details);
  }
}

/** A function argument or option is invalid; `argument` names it. */
export class SearchInputError extends SearchEnvError {
  readonly argument: string;

  constructor(argument: string, message: string, details: { hint?: string; cause?: unknown } = {}) {
    super('INVALID_ARGUMENT', `${argument}: ${message}`, details);
    this.argument = argument;
  }
}

const DATA_LINE_HINT =
  'fix or remove this line: a questions file holds {"question", "golden_answers"} objects, a corpus {"id", "contents"} objects, one per line';

/**
 * A line of a JSONL data file (or a record of a Parquet or JSON file, `record`) is unreadable or lacks a field; `line`
 * 0 is the file as a whole.
 */
export class DataFileError extends SearchEnvError {
  declare readonly file: string;
  readonly line: number;
  readonly record: number | undefined;
  readonly field: string | undefined;

  constructor(
    file: string,
    line: number,
    field: string | undefined,
    message: string,
    options: { cause?: unknown; hint?: string; record?: number } = {},
  ) {
    const place = line > 0 ? `line ${line}` : options.record !== undefined ? `record ${options.record}` : '';
    const where = [place, field ? `(field "${field}")` : ''].filter(Boolean).join(' ');
    super('DATASET_INVALID', `${where ? `${where}: ` : ''}${message}`, {
      file,
      cause: options.cause,
      hint: options.hint ?? DATA_LINE_HINT,
    });
    this.line = line;
    this.record = options.record;
    this.field = field;
  }
}

const RETRIEVER_HINT = 'check that the URL points at a Search-R1 compatible retriever server (POST /retrieve)';

/** A retriever server rejected a request (HTTP 4xx); retrying the same request cannot help. */
export class RetrieverRequestError extends SearchEnvError {
  readonly url: string;
  readonly status: number;

  constructor(url: string, status: number, serverMessage: string) {
    super('SERVICE_FAILED', `retriever at ${url} rejected the request (HTTP ${status}): ${serverMessage}`, { hint: RETRIEVER_HINT });
    this.url = url;
    this.status = status;
  }
}

/** A retriever server answered 200 with a body that is not a `/retrieve` response, or one larger than the client accepts. */
export class RetrieverResponseError extends SearchEnvError {
  readonly url: string;

  /** `options.what` replaces "sent a response that is not a /retrieve result" at the head of the message. */
  constructor(url: string, problem: string, options: { what?: string; hint?: string } = {}) {
    const { what = 'sent a response that is not a /retrieve result', hint = RETRIEVER_HINT } = options;
    super('SERVICE_FAILED', `retriever at ${url} ${what}: ${problem}`, { hint });
    this.url = url;
  }
}

/** One failed attempt of a retriever request. */
export interface RetrieveAttemptFailure {
  attempt: number;
  url: string;
  reason: string;
}

/** Every attempt of a retriever request failed (server errors, refused connections, time-outs). */
export class RetrieverUnavailableError extends SearchEnvError {
  readonly attempts: readonly RetrieveAttemptFailure[];

  constructor(attempts: readonly RetrieveAttemptFailure[]) {
    const lines = attempts.map((a) => `  attempt ${a.attempt}: ${a.url}: ${a.reason}`);
    super(
      'SERVICE_FAILED',
      `retriever request failed after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}:\n${lines.join('\n')}`,
      {
        hint: 'check that the retriever server is running and reachable at these URLs (GET /health should answer), or raise timeoutMs/maxRetries',
      },
    );
    this.attempts = attempts;
  }
}
