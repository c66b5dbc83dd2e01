import { DrmasError } from '@drmas/core';

/** OpenAI's error `type`s the gateway answers with. */
export type OpenAiErrorType = 'invalid_request_error' | 'not_found_error' | 'server_error';

/**
 * An answer in OpenAI's error shape, `{ "error": { message, type, param, code } }`, with its HTTP status: what the
 * `openai` client turns into `BadRequestError`, `NotFoundError`, ... with `.param` and `.code`.
 */
export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAiErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  static badRequest(message: string, param: string | null, code = 'invalid_value'): OpenAiError {
    return new OpenAiError(400, message, 'invalid_request_error', param, code);
  }

  static notFound(message: string, param: string | null, code: string): OpenAiError {
    return new OpenAiError(404, message, 'not_found_error', param, code);
  }

  /**
   * Any error as an answer: a DrmasError (the engine refused the input: a prompt too long for the model's positions,
   * ...) is the client's 400 with its hint; anything else is the server's 500.
   */
  static from(error: unknown): OpenAiError {
    if (error instanceof OpenAiError) return error;
    if (DrmasError.is(error)) {
      const hint = error.hint ? ` (${error.hint})` : '';
      return new OpenAiError(400, `${error.message}${hint}`, 'invalid_request_error', null, error.code.toLowerCase());
    }
    return new OpenAiError(500, `internal error: ${(error as Error)?.message ?? String(error)}`, 'server_error', null, 'internal_error');
  }
}
