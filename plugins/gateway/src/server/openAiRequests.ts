import { z, type ChatMessage } from '@drmas/core';
import { OpenAiError } from './OpenAiError.js';

/** OpenAI's bound on the number of stop sequences. */
const MAX_STOP = 4;
/** The sampling seeds the engines take (as `drmas generate --seed`). */
const MAX_SEED = 2 ** 32 - 1;

/** Keys both endpoints share. Unknown keys are ignored, as OpenAI-compatible servers do. */
const sampling = {
  model: z.string().min(1),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(MAX_STOP)]).nullish(),
  seed: z.number().int().min(0).max(MAX_SEED).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  return_token_ids: z.boolean().nullish(),
  // vLLM's sampling extensions: top-k (-1 or 0: off) and ids that end the completion besides the model's own.
  top_k: z.number().int().min(-1).nullish(),
  stop_token_ids: z.array(z.number().int().min(0)).max(64).nullish(),
};

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const message = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(contentPart)]).nullish(),
});

const chatBody = z.looseObject({
  ...sampling,
  messages: z.array(message).min(1),
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  tools: z.array(z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) })).nullish(),
  tool_choice: z.enum(['auto', 'none']).nullish(),
});

const completionBody = z.looseObject({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int().min(0)), z.array(z.array(z.number().int().min(0)))]),
  logprobs: z.number().int().min(0).max(5).nullish(),
});

/**
 * Parameters OpenAI defines that would change what is sampled and that the gateway does not implement: refused with a
 * 400 naming the parameter rather than ignored, unless given their neutral value.
 */
const UNSUPPORTED: Record<string, { neutral: (value: unknown) => boolean; why: string }> = {
  n: { neutral: (v) => v === 1, why: 'the gateway samples one choice per request; send n requests (they are batched together)' },
  best_of: { neutral: (v) => v === 1, why: 'the gateway samples one choice per request' },
  frequency_penalty: { neutral: (v) => v === 0, why: 'the engines sample without penalties' },
  presence_penalty: { neutral: (v) => v === 0, why: 'the engines sample without penalties' },
  logit_bias: {
    neutral: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
    why: 'the engines sample without logit bias',
  },
  echo: { neutral: (v) => v === false, why: 'the prompt is returned as ids with return_token_ids' },
  suffix: { neutral: (v) => v === '', why: 'the engines do not fill in the middle' },
  tool_choice: {
    neutral: (v) => v === 'auto' || v === 'none',
    why: 'the engines do not force a call (no constrained decoding); use "auto" (the model decides) or "none"',
  },
  response_format: {
    neutral: (v) => typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'text',
    why: 'the engines do not constrain the output to a format',
  },
};

/** What the engine is asked for, whichever endpoint asked. */
export interface SamplingRequest {
  model: string;
  temperature: number;
  topP: number;
  /** 0: off. */
  topK: number;
  stopTokenIds: number[];
  /** Absent: as many as the model's positions leave after the prompt. */
  maxTokens?: number;
  stop: string[];
  seed?: number;
  stream: boolean;
  includeUsage: boolean;
  returnTokenIds: boolean;
  /** Return the sampled tokens' log-probs. */
  logprobs: boolean;
  /** And each step's most likely tokens, this many. */
  topLogprobs: number;
}

export interface ChatRequest extends SamplingRequest {
  messages: ChatMessage[];
  /** Tool schemas for the chat template (absent with `tool_choice: "none"`); calls are parsed from the output. */
  tools?: unknown[];
}

export interface CompletionRequest extends SamplingRequest {
  /** Text to encode, or the prompt's token ids as given. */
  prompt: string | number[];
}

/** A request body by `schema`, refused with a 400 naming the first bad parameter (and OpenAI's unsupported ones). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw OpenAiError.badRequest('the request body must be a JSON object', null, 'invalid_json');
  }
  for (const [param, rule] of Object.entries(UNSUPPORTED)) {
    const value = (body as Record<string, unknown>)[param];
    if (value !== undefined && value !== null && !rule.neutral(value)) {
      throw OpenAiError.badRequest(`${param} ${JSON.stringify(value)} is not supported: ${rule.why}`, param, 'unsupported_parameter');
    }
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = issue.path.map(String).join('.') || null;
    const value = issue.path.reduce<unknown>((at, key) => (at as Record<PropertyKey, unknown> | undefined)?.[key], body);
    const got = value === undefined ? 'it is missing' : `got ${JSON.stringify(value)}`;
    throw OpenAiError.badRequest(`${param ?? 'the body'}: ${issue.message} (${got})`, param);
  }
  return parsed.data;
}

function common(body: z.infer<typeof chatBody> | z.infer<typeof completionBody>): Omit<SamplingRequest, 'logprobs' | 'topLogprobs'> {
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  return {
    model: body.model,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    topK: Math.max(0, body.top_k ?? 0),
    stopTokenIds: body.stop_token_ids ?? [],
    maxTokens: body.max_tokens ?? undefined,
    stop: stop.filter((s) => s.length > 0),
    seed: body.seed ?? undefined,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    returnTokenIds: body.return_token_ids ?? false,
  };
}

/** The text of a message's content: a string, or the text parts of a list joined (other parts refused). */
function messageText(content: z.infer<typeof message>['content'], index: number): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, p) => {
      if (part.type !== 'text' || part.text === undefined) {
        throw OpenAiError.badRequest(
          `content part of type "${part.type}" is not supported: these models read text only`,
          `messages.${index}.content.${p}`,
        );
      }
      return part.text;
    })
    .join('');
}

export function parseChatRequest(body: unknown): ChatRequest {
  const parsed = parseBody(chatBody, body);
  if (parsed.top_logprobs && !parsed.logprobs) {
    throw OpenAiError.badRequest('top_logprobs needs logprobs: true', 'top_logprobs');
  }
  const messages = parsed.messages.map(({ role, content, ...rest }, i): ChatMessage => ({
    ...rest,
    role,
    content: messageText(content, i),
  }));
  return {
    ...common(parsed),
    maxTokens: parsed.max_completion_tokens ?? parsed.max_tokens ?? undefined,
    messages,
    logprobs: parsed.logprobs ?? false,
    topLogprobs: parsed.top_logprobs ?? 0,
    tools: parsed.tools?.length && parsed.tool_choice !== 'none' ? parsed.tools : undefined,
  };
}

export function parseCompletionRequest(body: unknown): CompletionRequest {
  const parsed = parseBody(completionBody, body);
  let prompt: string | number[];
  const given = parsed.prompt;
  if (typeof given === 'string') prompt = given;
  else if (given.length === 1 && (typeof given[0] === 'string' || Array.isArray(given[0]))) prompt = given[0];
  else if (given.every((item) => typeof item === 'number')) prompt = given;
  else throw OpenAiError.badRequest('give one prompt per request (they are batched together)', 'prompt');
  return { ...common(parsed), prompt, logprobs: parsed.logprobs != null, topLogprobs: parsed.logprobs ?? 0 };
}
