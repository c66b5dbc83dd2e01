import { randomUUID } from 'node:crypto';
import { scoringTemperature, type TopLogProb } from '@drmas/core';
import type { PrefixCache } from '../engine/PrefixCache.js';
import type { ServedModel } from '../engine/ServedModels.js';
import type { SampleRequest, SampleResult } from '@drmas/models';
import type { CapturedTurn, Session } from '../capture/Sessions.js';
import { OpenAiError } from './OpenAiError.js';
import { TextStream } from './TextStream.js';
import { parseToolCalls, templateMessages, TOOL_CALL_OPEN, type ToolCall } from './toolCalls.js';
import type { ChatRequest, CompletionRequest, SamplingRequest } from './openAiRequests.js';

/** Where an answer goes: one JSON body, or server-sent events (`data: {...}` ... `data: [DONE]`). */
export interface ResponseSink {
  json(body: unknown): void;
  event(body: unknown): void;
  done(): void;
}

/** Who made the call: the served model, the agent role it is recorded under, and a capture session. */
export interface CallContext {
  served: ServedModel;
  agent?: string;
  /** The capture session the call belongs to, held (not idle) until the call is over. */
  session?: Session;
  /** Called with the call's turn once sampling ended (the capture session's recorder). */
  record?: (turn: CapturedTurn) => void;
  /** The server's prefix cache, which refuses a prompt cached on weights older than the last reload. */
  prefixCache?: PrefixCache;
}

interface SampledToken {
  id: number;
  logprob: number;
  /** The step's most likely tokens (`top_logprobs`). */
  top: readonly TopLogProb[];
}

/** One endpoint's response shapes (chat or text completion). */
interface Shapes {
  endpoint: CapturedTurn['endpoint'];
  idPrefix: string;
  object: string;
  chunkObject: string;
  /** The first streamed chunk's choice fields (chat: the assistant role). */
  opening(): Record<string, unknown> | undefined;
  /** A choice of a response (`streamed`: of a chunk), with the tool calls parsed from the whole text, if any. */
  choice(
    text: string | null,
    tokens: SampledToken[],
    finishReason: string | null,
    streamed: boolean,
    toolCalls?: ToolCall[],
  ): Record<string, unknown>;
}

/** The token as a string for log-prob entries: its own text, or `token_id:N` (vLLM's spelling) without a tokenizer. */
function tokenText(served: ServedModel, id: number): string {
  return served.codec ? served.codec.decode([id]) : `token_id:${id}`;
}

/** OpenAI's chat log-prob entry: the token's text, its log-prob and its UTF-8 bytes. */
function logprobEntry(served: ServedModel, id: number, logprob: number) {
  const token = tokenText(served, id);
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')] };
}

function chatShapes(served: ServedModel, request: SamplingRequest): Shapes {
  const logprobs = (tokens: SampledToken[]) =>
    request.logprobs
      ? {
          content: tokens.map(({ id, logprob, top }) => ({
            ...logprobEntry(served, id, logprob),
            top_logprobs: top.map((t) => logprobEntry(served, t.tokenId, t.logProb)),
          })),
        }
      : null;
  const ids = (tokens: SampledToken[]) => (request.returnTokenIds ? { token_ids: tokens.map((t) => t.id) } : {});
  return {
    endpoint: 'chat.completions',
    idPrefix: 'chatcmpl',
    object: 'chat.completion',
    chunkObject: 'chat.completion.chunk',
    opening: () => ({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }),
    choice: (text, tokens, finishReason, streamed, toolCalls) => ({
      index: 0,
      ...(streamed
        ? {
            delta: toolCalls
              ? { tool_calls: toolCalls.map((call, index) => ({ index, ...call })) }
              : finishReason === null
                ? { content: text }
                : {},
          }
        : { message: { role: 'assistant', content: text, tool_calls: toolCalls ?? [] } }),
      logprobs: logprobs(tokens),
      finish_reason: finishReason,
      ...ids(tokens),
    }),
  };
}

function textShapes(served: ServedModel, request: SamplingRequest, promptIds: number[]): Shapes {
  const logprobs = (tokens: SampledToken[]) => {
    if (!request.logprobs) return null;
    const strings = tokens.map((t) => tokenText(served, t.id));
    const offsets: number[] = [];
    strings.reduce((at, s) => (offsets.push(at), at + s.length), 0);
    // The legacy format: each position's most likely tokens as { text: log-prob }.
    const top = request.topLogprobs
      ? tokens.map((t) => Object.fromEntries(t.top.map((entry) => [tokenText(served, entry.tokenId), entry.logProb])))
      : null;
    return { tokens: strings, token_logprobs: tokens.map((t) => t.logprob), top_logprobs: top, text_offset: offsets };
  };
  let first = true;
  return {
    endpoint: 'completions',
    idPrefix: 'cmpl',
    object: 'text_completion',
    chunkObject: 'text_completion',
    opening: () => undefined,
    choice: (text, tokens, finishReason) => {
      // vLLM puts the prompt's ids on the (first) choice of a text completion.
      const prompt = request.returnTokenIds && first ? { prompt_token_ids: promptIds } : {};
      first = false;
      return {
        index: 0,
        text,
        logprobs: logprobs(tokens),
        finish_reason: finishReason,
        ...prompt,
        ...(request.returnTokenIds ? { token_ids: tokens.map((t) => t.id) } : {}),
      };
    },
  };
}

/** The engine request for a prompt: the prompt checked against the model, `max_tokens` defaulted and bounded. */
export function sampleRequest(
  served: ServedModel,
  promptIds: number[],
  request: Pick<SamplingRequest, 'maxTokens' | 'stop' | 'temperature' | 'topP' | 'topK' | 'stopTokenIds' | 'seed' | 'topLogprobs'>,
  promptParam: string,
): SampleRequest {
  if (promptIds.length === 0) throw OpenAiError.badRequest('the prompt encodes to no tokens', promptParam);
  const vocab = served.engine.vocabSize;
  const bad = promptIds.find((id) => id >= vocab);
  if (bad !== undefined) throw OpenAiError.badRequest(`token id ${bad} is outside the vocabulary [0, ${vocab})`, promptParam);
  const positions = served.engine.maxPositions;
  const room = positions === undefined ? Number.POSITIVE_INFINITY : positions - promptIds.length;
  if (room < 1) {
    throw OpenAiError.badRequest(
      `the prompt has ${promptIds.length} tokens, which leaves no room in this model's ${positions} positions`,
      promptParam,
      'context_length_exceeded',
    );
  }
  const maxNewTokens = request.maxTokens ?? (Number.isFinite(room) ? room : DEFAULT_UNBOUNDED_MAX_TOKENS);
  if (maxNewTokens > room) {
    throw OpenAiError.badRequest(
      `max_tokens ${maxNewTokens} and the prompt's ${promptIds.length} tokens exceed this model's ${positions} positions; ask for at most ${room}`,
      'max_tokens',
      'context_length_exceeded',
    );
  }
  if (request.stop.length && !served.codec) {
    throw OpenAiError.badRequest(`model "${served.name}" has no tokenizer to find stop strings with`, 'stop');
  }
  return {
    promptIds,
    maxNewTokens,
    temperature: request.temperature,
    topP: request.topP,
    topK: request.topK,
    stopTokenIds: request.stopTokenIds,
    seed: request.seed,
    stopStrings: request.stop,
    topLogProbs: request.topLogprobs,
  };
}

/** The sample, through the server's prefix cache when it has one. */
function sampled(call: CallContext, promptIds: number[], sample: () => Promise<SampleResult>): Promise<SampleResult> {
  return call.prefixCache ? call.prefixCache.serve(call.served.modelId, promptIds, sample) : sample();
}

/** `max_tokens` when neither the request nor the model's positions bound it. */
const DEFAULT_UNBOUNDED_MAX_TOKENS = 1024;

async function serve(
  call: CallContext,
  request: SamplingRequest,
  promptIds: number[],
  engineRequest: SampleRequest,
  shapes: Shapes,
  out: ResponseSink,
): Promise<void> {
  const { served } = call;
  const id = `${shapes.idPrefix}-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const envelope = (object: string) => ({ id, object, created, model: served.name });
  // With tools, a call's text is not streamed as content: the stream holds back from `<tool_call>` on.
  const tools = shapes.endpoint === 'chat.completions' && (request as ChatRequest).tools !== undefined;
  const text = new TextStream(served.codec, tools ? [...request.stop, TOOL_CALL_OPEN] : request.stop);
  let result: SampleResult;
  let whole: string;
  if (request.stream) {
    const opening = shapes.opening();
    const promptIds_ = request.returnTokenIds && shapes.endpoint === 'chat.completions' ? { prompt_token_ids: promptIds } : {};
    if (opening) out.event({ ...envelope(shapes.chunkObject), choices: [opening], ...promptIds_ });
    let streamed = 0;
    const chunk = (tokenId: number, logprob: number, top: readonly TopLogProb[]) => {
      streamed++;
      const delta = text.push(tokenId);
      out.event({ ...envelope(shapes.chunkObject), choices: [shapes.choice(delta, [{ id: tokenId, logprob, top }], null, true)] });
    };
    result = await sampled(call, promptIds, () => served.batcher.sample({ ...engineRequest, onToken: chunk }));
    // An engine that does not stream (a scripted one) gives its tokens here.
    for (let i = streamed; i < result.tokenIds.length; i++) chunk(result.tokenIds[i]!, result.logProbs[i]!, result.topLogProbs[i] ?? []);
    const rest = text.finish();
    whole = fullText(served, request, result);
    const parsed = tools ? parseToolCalls(whole) : undefined;
    const tokens = sampledTokens(result);
    // Without a call that parses, what the stream held back from `<tool_call>` on is content after all.
    const held = parsed ? '' : rest + (tools ? whole.slice(text.text.length) : '');
    if (held) out.event({ ...envelope(shapes.chunkObject), choices: [shapes.choice(held, [], null, true)] });
    if (parsed) out.event({ ...envelope(shapes.chunkObject), choices: [shapes.choice(null, [], null, true, parsed.calls)] });
    out.event({ ...envelope(shapes.chunkObject), choices: [shapes.choice('', [], parsed ? 'tool_calls' : result.finishReason, true)] });
    if (request.includeUsage) out.event({ ...envelope(shapes.chunkObject), choices: [], usage: usage(promptIds, tokens) });
    out.done();
  } else {
    result = await sampled(call, promptIds, () => served.batcher.sample(engineRequest));
    whole = fullText(served, request, result);
    const parsed = tools ? parseToolCalls(whole) : undefined;
    const tokens = sampledTokens(result);
    out.json({
      ...envelope(shapes.object),
      choices: [
        parsed
          ? shapes.choice(parsed.content, tokens, 'tool_calls', false, parsed.calls)
          : shapes.choice(whole, tokens, result.finishReason, false),
      ],
      usage: usage(promptIds, tokens),
      ...(request.returnTokenIds && shapes.endpoint === 'chat.completions' ? { prompt_token_ids: promptIds } : {}),
    });
  }
  call.record?.({
    id,
    model: served.name,
    modelId: served.modelId,
    agent: call.agent,
    endpoint: shapes.endpoint,
    promptIds,
    responseIds: result.tokenIds,
    logProbs: result.logProbs,
    temperature: scoringTemperature(request.temperature),
    finishReason: result.finishReason,
    text: whole,
  });
}

/** The text of the sampled ids as the client gets it: special tokens left out, ended before the first stop string. */
function fullText(served: ServedModel, request: SamplingRequest, result: SampleResult): string {
  const text = served.codec ? served.codec.decode(result.tokenIds, { skipSpecialTokens: true }) : '';
  const ends = request.stop.map((stop) => text.indexOf(stop)).filter((at) => at >= 0);
  return ends.length ? text.slice(0, Math.min(...ends)) : text;
}

function sampledTokens(result: SampleResult): SampledToken[] {
  return result.tokenIds.map((id, i) => ({ id, logprob: result.logProbs[i]!, top: result.topLogProbs[i] ?? [] }));
}

function usage(promptIds: number[], tokens: SampledToken[]) {
  return { prompt_tokens: promptIds.length, completion_tokens: tokens.length, total_tokens: promptIds.length + tokens.length };
}

/** `POST /v1/chat/completions`: the messages through the tokenizer's chat template, with the generation prompt. */
export async function chatCompletion(call: CallContext, request: ChatRequest, out: ResponseSink): Promise<void> {
  const { served } = call;
  const codec = served.codec;
  if (!codec?.applyChatTemplate || !codec.chatTemplate) {
    throw OpenAiError.badRequest(
      `model "${served.name}" has no chat template (tokenizer_config.json chat_template); use /v1/completions`,
      'model',
    );
  }
  const messages = templateMessages(request.messages);
  const rendered = codec.applyChatTemplate(messages, { addGenerationPrompt: true, tools: request.tools });
  if (request.tools && rendered === codec.applyChatTemplate(messages, { addGenerationPrompt: true })) {
    throw OpenAiError.badRequest(
      `the chat template of model "${served.name}" does not render tools, so the model cannot call them`,
      'tools',
    );
  }
  const promptIds = codec.encode(rendered, { addSpecialTokens: false });
  const engineRequest = sampleRequest(served, promptIds, request, 'messages');
  await serve(call, request, promptIds, engineRequest, chatShapes(served, request), out);
}

/** `POST /v1/completions`: a text prompt encoded with the tokenizer's special tokens, or token ids taken as they are. */
export async function textCompletion(call: CallContext, request: CompletionRequest, out: ResponseSink): Promise<void> {
  const { served } = call;
  let promptIds: number[];
  if (typeof request.prompt === 'string') {
    if (!served.codec) throw OpenAiError.badRequest(`model "${served.name}" has no tokenizer: give the prompt as token ids`, 'prompt');
    promptIds = served.codec.encode(request.prompt);
  } else {
    promptIds = request.prompt;
  }
  const engineRequest = sampleRequest(served, promptIds, request, 'prompt');
  await serve(call, request, promptIds, engineRequest, textShapes(served, request, promptIds), out);
}
