import { DrmasError } from '@drmas/core';
import type { ServerClient } from './ServerClient.js';

/** One prompt row as sent to the server: one request each, with its own seed. */
export interface RowSampling {
  promptIds: number[];
  maxNewTokens: number;
  /** 0: greedy. */
  temperature: number;
  topP: number;
  /** 0: off. */
  topK: number;
  stopStrings: readonly string[];
  stopTokenIds: readonly number[];
  seed: number;
}

export interface RowSample {
  tokenIds: number[];
  /** The sampled ids' log-probs as the server computed them. */
  logProbs: number[];
  finishReason: 'stop' | 'length';
}

/** How one server family is asked to sample and to load new weights. */
export interface RemoteDialect {
  readonly kind: 'vllm' | 'sglang';
  sample(client: ServerClient, servedModel: string | undefined, row: RowSampling): Promise<RowSample>;
  /** Loads the Hugging Face checkpoint at `dir` (a path the server reads) as `version`, and checks the server reports it. */
  pushWeights(client: ServerClient, dir: string, version: string): Promise<void>;
}

function malformed(client: ServerClient, route: string, what: string): DrmasError {
  return new DrmasError('SERVICE_FAILED', `${client.url}${route} answered without ${what}`, {
    key: client.key,
    hint: 'is this the server kind models.<id>.rollout.kind names, and recent enough (vLLM 0.10.2+ for return_token_ids)?',
  });
}

function finish(reason: unknown): 'stop' | 'length' {
  return reason === 'length' ? 'length' : 'stop';
}

function checkVersion(client: ServerClient, route: string, got: unknown, version: string): void {
  if (got !== version) {
    throw new DrmasError(
      'SERVICE_FAILED',
      `${client.url}${route} reports weight version ${JSON.stringify(got)} after loading "${version}"`,
      {
        key: client.key,
        hint: 'another trainer may share this server, or it did not load the new weights; give each trained model its own server',
      },
    );
  }
}

interface VllmCompletion {
  choices?: Array<{ token_ids?: number[]; logprobs?: { token_logprobs?: number[] } | null; finish_reason?: string }>;
}

/**
 * vLLM's OpenAI-compatible `/v1/completions` with the prompt as token ids, `return_token_ids` (vLLM 0.10.2+) for the
 * sampled ids and `logprobs: 0` for their log-probs; the stop string kept in the output (`include_stop_str_in_output`)
 * as drmas's engines keep it. Weights: the dev-mode routes (`VLLM_SERVER_DEV_MODE=1`): `/collective_rpc` calling the
 * workers' `reload_weights` with the folder, `/update_weight_version`, read back at `/weight_info`.
 */
export const vllmDialect: RemoteDialect = {
  kind: 'vllm',
  async sample(client, servedModel, row) {
    const route = '/v1/completions';
    const answer = await client.post<VllmCompletion>(route, {
      model: servedModel,
      prompt: row.promptIds,
      max_tokens: row.maxNewTokens,
      temperature: row.temperature,
      top_p: row.topP,
      ...(row.topK > 0 ? { top_k: row.topK } : {}),
      seed: row.seed,
      ...(row.stopStrings.length ? { stop: row.stopStrings, include_stop_str_in_output: true } : {}),
      ...(row.stopTokenIds.length ? { stop_token_ids: row.stopTokenIds } : {}),
      logprobs: 0,
      return_token_ids: true,
    });
    const choice = answer.choices?.[0];
    const tokenIds = choice?.token_ids;
    const logProbs = choice?.logprobs?.token_logprobs;
    if (!Array.isArray(tokenIds)) throw malformed(client, route, 'choices[0].token_ids');
    if (!Array.isArray(logProbs) || logProbs.length !== tokenIds.length) throw malformed(client, route, 'a log-prob per sampled id');
    return { tokenIds, logProbs, finishReason: finish(choice!.finish_reason) };
  },
  async pushWeights(client, dir, version) {
    await client.post('/collective_rpc', { method: 'reload_weights', kwargs: { weights_path: dir } });
    await client.post('/update_weight_version', { new_version: version });
    checkVersion(client, '/weight_info', (await client.get<{ weight_version?: unknown }>('/weight_info')).weight_version, version);
  },
};

interface SglangGenerate {
  output_ids?: number[];
  meta_info?: { finish_reason?: { type?: string } | null; output_token_logprobs?: Array<[number, number, unknown]> };
}

/**
 * SGLang's native `/generate` with `input_ids`, `return_logprob` (the sampled ids and log-probs as
 * `meta_info.output_token_logprobs` triples) and `sampling_seed`; the stop string kept (`no_stop_trim`). Weights:
 * `/update_weights_from_disk` with `weight_version`, read back at `/get_weight_version`.
 */
export const sglangDialect: RemoteDialect = {
  kind: 'sglang',
  async sample(client, _servedModel, row) {
    const route = '/generate';
    const answer = await client.post<SglangGenerate>(route, {
      input_ids: row.promptIds,
      sampling_params: {
        max_new_tokens: row.maxNewTokens,
        temperature: row.temperature,
        top_p: row.topP,
        top_k: row.topK > 0 ? row.topK : -1,
        ...(row.stopStrings.length ? { stop: row.stopStrings, no_stop_trim: true } : {}),
        ...(row.stopTokenIds.length ? { stop_token_ids: row.stopTokenIds } : {}),
        sampling_seed: row.seed,
      },
      return_logprob: true,
    });
    const triples = answer.meta_info?.output_token_logprobs;
    if (!Array.isArray(triples)) throw malformed(client, route, 'meta_info.output_token_logprobs');
    const tokenIds = triples.map((t) => t[1]);
    if (answer.output_ids && answer.output_ids.join() !== tokenIds.join())
      throw malformed(client, route, 'log-probs for the output_ids it sent');
    return { tokenIds, logProbs: triples.map((t) => t[0]), finishReason: finish(answer.meta_info?.finish_reason?.type) };
  },
  async pushWeights(client, dir, version) {
    const answer = await client.post<{ success?: unknown; message?: unknown }>('/update_weights_from_disk', {
      model_path: dir,
      weight_version: version,
    });
    if (answer.success !== true) {
      throw new DrmasError('SERVICE_FAILED', `${client.url}/update_weights_from_disk did not load ${dir}: ${String(answer.message)}`, {
        key: client.key,
      });
    }
    checkVersion(
      client,
      '/get_weight_version',
      (await client.get<{ weight_version?: unknown }>('/get_weight_version')).weight_version,
      version,
    );
  },
};

export const DIALECTS: Readonly<Record<RemoteDialect['kind'], RemoteDialect>> = { vllm: vllmDialect, sglang: sglangDialect };
