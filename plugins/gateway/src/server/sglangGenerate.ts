import { randomUUID } from 'node:crypto';
import { z } from '@drmas/core';
import type { WeightReloads } from '../engine/WeightReloads.js';
import { OpenAiError } from './OpenAiError.js';
import { sampleRequest } from './completions.js';
import { parseBody } from './openAiRequests.js';

/** SGLang's `max_new_tokens` default (`sampling_params.py`). */
const SGLANG_MAX_NEW_TOKENS = 128;

/** SGLang's native `/generate` body, one prompt (`GenerateReqInput`; a batch of prompts is refused: send one each). */
const generateBody = z.looseObject({
  input_ids: z.array(z.number().int().min(0)).min(1).optional(),
  text: z.string().optional(),
  sampling_params: z
    .looseObject({
      max_new_tokens: z.number().int().min(1).nullish(),
      temperature: z.number().min(0).max(2).nullish(),
      top_p: z.number().gt(0).max(1).nullish(),
      top_k: z.number().int().min(-1).nullish(),
      stop: z.union([z.string(), z.array(z.string())]).nullish(),
      stop_token_ids: z.array(z.number().int().min(0)).nullish(),
      sampling_seed: z
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1)
        .nullish(),
      no_stop_trim: z.boolean().nullish(),
    })
    .nullish(),
  return_logprob: z.boolean().nullish(),
  stream: z.boolean().nullish(),
});

/**
 * `POST /generate` in SGLang's dialect: `input_ids` (or `text`) with `sampling_params`, answered with `text`,
 * `output_ids` and `meta_info` (`finish_reason` as `{ type }`, and with `return_logprob` the
 * `output_token_logprobs` as `[logprob, token_id, null]` triples). Not streamed; not recorded in a session.
 */
export async function sglangGenerate(reloads: WeightReloads, body: unknown): Promise<unknown> {
  const parsed = parseBody(generateBody, body);
  if (parsed.stream) throw OpenAiError.badRequest('stream is not served on /generate here; use /v1/completions to stream', 'stream');
  const served = reloads.target();
  let promptIds = parsed.input_ids;
  if (!promptIds) {
    if (parsed.text === undefined) throw OpenAiError.badRequest('give the prompt as input_ids (or text)', 'input_ids');
    if (!served.codec) throw OpenAiError.badRequest(`model "${served.name}" has no tokenizer: give input_ids`, 'text');
    promptIds = served.codec.encode(parsed.text);
  }
  const params = parsed.sampling_params ?? {};
  const stop = params.stop == null ? [] : typeof params.stop === 'string' ? [params.stop] : params.stop;
  const request = sampleRequest(
    served,
    promptIds,
    {
      temperature: params.temperature ?? 1,
      topP: params.top_p ?? 1,
      topK: Math.max(0, params.top_k ?? 0),
      stopTokenIds: params.stop_token_ids ?? [],
      stop: stop.filter((s) => s.length > 0),
      seed: params.sampling_seed ?? undefined,
      maxTokens: params.max_new_tokens ?? SGLANG_MAX_NEW_TOKENS,
      topLogprobs: 0,
    },
    'input_ids',
  );
  const result = await reloads.prefixCache.serve(served.modelId, promptIds, () => served.batcher.sample(request));
  let text = served.codec ? served.codec.decode(result.tokenIds, { skipSpecialTokens: true }) : '';
  if (!params.no_stop_trim) {
    const ends = request.stopStrings.map((s) => text.indexOf(s)).filter((at) => at >= 0);
    if (ends.length) text = text.slice(0, Math.min(...ends));
  }
  return {
    text,
    output_ids: result.tokenIds,
    meta_info: {
      id: randomUUID().replaceAll('-', ''),
      finish_reason:
        result.finishReason === 'length' ? { type: 'length', length: result.tokenIds.length } : { type: 'stop', matched: null },
      prompt_tokens: promptIds.length,
      completion_tokens: result.tokenIds.length,
      ...(parsed.return_logprob ? { output_token_logprobs: result.tokenIds.map((id, i) => [result.logProbs[i]!, id, null]) } : {}),
      weight_version: reloads.version ?? 'default',
    },
  };
}
