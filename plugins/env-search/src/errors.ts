/** Base class of the errors this package throws; `instanceof SearchEnvError` catches them all. */
export class SearchEnvError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A function argument or option is invalid; `argument` names it. */
export class SearchInputError extends SearchEnvError {
  readonly argument: string;

  constructor(argument: string, message: string) {
    super(`${argument}: ${message}`);
    this.argument = argument;
  }
}

/** A line of a JSONL data file is unreadable or lacks a field. */
export class DataFileError extends SearchEnvError {
  readonly file: string;
  readonly line: number;
  readonly field: string | undefined;

  constructor(file: string, line: number, field: string | undefined, message: string, options?: { cause?: unknown }) {
    super(`${file}${line > 0 ? `:${line}` : ''}${field ? ` (field "${field}")` : ''}: ${message}`, options);
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

/** A retriever server rejected a request (HTTP 4xx); retrying the same request cannot help. */
export class RetrieverRequestError extends SearchEnvError {
  readonly url: string;
  readonly status: number;

  constructor(url: string, status: number, serverMessage: string) {
    super(`retriever at ${url} rejected the request (HTTP ${status}): ${serverMessage}`);
    this.url = url;
    this.status = status;
  }
}

/** A retriever server answered 200 with a body that is not a `/retrieve` response. */
export class RetrieverResponseError extends SearchEnvError {
  readonly url: string;

  constructor(url: string, problem: string) {
    super(
      `retriever at ${url} sent a response that is not a /retrieve result: ${problem}; ` +
        'check that the URL points at a Search-R1 compatible retriever server',
    );
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
      `retriever request failed after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n` +
        'check that the retriever server is running and reachable at these URLs ' +
        '(GET /health should answer), or raise timeoutMs/maxRetries',
    );
    this.attempts = attempts;
  }
}
