import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * Asks the server, before the first push, for the routes pushes need; a server that lacks one (a flag not given, a
   * version too old) fails here with a message naming the route and what provides it.
   */
  probe(client: ServerClient): Promise<void>;
  sample(client: ServerClient, servedModel: string | undefined, row: RowSampling): Promise<RowSample>;
  /** Loads the Hugging Face checkpoint at `dir` (a path the server reads) as `version`, and checks the server reports it. */
  pushWeights(client: ServerClient, dir: string, version: string): Promise<void>;
}

/** Tries of `/reset_prefix_cache` while it answers `success: false` (blocks still held by running requests). */
const PREFIX_RESET_TRIES = 20;
const PREFIX_RESET_WAIT_MS = 100;

function malformed(client: ServerClient, route: string, what: string): DrmasError {
  return new DrmasError('SERVICE_FAILED', `${client.url}${route} answered without ${what}`, {
    key: client.key,
    hint: 'is this the server kind models.<id>.rollout.kind names, and recent enough (vLLM 0.10.2+ for return_token_ids)?',
  });
}

/**
 * The row's finish. `abort` (vLLM's and SGLang's answer for a request the server dropped: a client disconnect, a
 * pause, an engine restart, a request over the context) is a failure, never a stop: its tokens are not a finished turn.
 */
function finish(client: ServerClient, route: string, reason: unknown, detail?: unknown): 'stop' | 'length' {
  if (reason === 'length') return 'length';
  if (reason === 'abort') {
    const said = typeof detail === 'string' && detail ? `: ${detail}` : '';
    throw new DrmasError('SERVICE_FAILED', `${client.url}${route} aborted the request (finish reason "abort")${said}`, {
      key: client.key,
      hint: "the server dropped it (paused for a weight update, restarted, or the prompt is over its context); see the server's log",
    });
  }
  return 'stop';
}

/** A route the server answers 404 to: which flag or version provides it. */
function missingRoute(client: ServerClient, route: string, said: string, provides: string): DrmasError {
  return new DrmasError('SERVICE_FAILED', `${client.url}${route} is not served (HTTP 404${said ? `: ${said}` : ''})`, {
    key: client.key,
    hint: provides,
  });
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
  choices?: Array<{
    token_ids?: number[];
    logprobs?: { token_logprobs?: number[] } | null;
    finish_reason?: string;
    stop_reason?: unknown;
  }>;
}

/**
 * vLLM's OpenAI-compatible `/v1/completions` with the prompt as token ids, `return_token_ids` (vLLM 0.10.2+) for the
 * sampled ids and `logprobs: 0` for their log-probs; the stop string kept in the output (`include_stop_str_in_output`)
 * as drmas's engines keep it. Weights: the dev-mode routes (`VLLM_SERVER_DEV_MODE=1`): `/collective_rpc` calling the
 * workers' `reload_weights` with the folder, `/reset_prefix_cache`, `/update_weight_version`, read back at `/weight_info`.
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
    return { tokenIds, logProbs, finishReason: finish(client, route, choice!.finish_reason, choice!.stop_reason) };
  },
  async probe(client) {
    if ((await client.getIfServed('/weight_info')) !== undefined) return;
    const version = (await client.getIfServed<{ version?: unknown }>('/version'))?.version;
    throw missingRoute(
      client,
      '/weight_info',
      '',
      `${typeof version === 'string' ? `this is vLLM ${version}; ` : ''}weight pushes need vLLM's dev-mode routes: start the ` +
        `server with VLLM_SERVER_DEV_MODE=1, on a vLLM with /update_weight_version and /weight_info (${VLLM_VERSION_ROUTES})`,
    );
  },
  async pushWeights(client, dir, version) {
    try {
      // vLLM answers an exception in the workers' method with a 500: not passing, so not tried again.
      await client.post(
        '/collective_rpc',
        { method: 'reload_weights', kwargs: { weights_path: dir, is_checkpoint_format: true } },
        { retryServerErrors: false },
      );
    } catch (error) {
      if (!(error instanceof DrmasError)) throw error;
      throw new DrmasError('SERVICE_FAILED', `${error.message} (reloading ${dir})`, {
        key: client.key,
        cause: error,
        hint:
          "see the server's log: a worker whose reload_weights takes no weights_path (vLLM before the layerwise reload) " +
          'cannot load a pushed folder; the folder must also be readable by the server at this path',
      });
    }
    await resetPrefixCache(client);
    await client.post('/update_weight_version', { new_version: version });
    checkVersion(client, '/weight_info', (await client.get<{ weight_version?: unknown }>('/weight_info')).weight_version, version);
  },
};

/** Where vLLM's weight-version routes come from. */
const VLLM_VERSION_ROUTES = 'vllm-project/vllm PR #49040, in vllm/entrypoints/serve/dev/rlhf/api_router.py';

/**
 * `POST /reset_prefix_cache` after a reload: vLLM keeps prefix caching on by default and leaves invalidating it to
 * the caller (PR #46125 reverted the automatic reset; the layerwise reload's docstring: "Callers are responsible for
 * invalidating any state derived from the old weights"), so without it a prompt sharing a cached prefix is decoded on
 * KV the previous weights computed. It answers `success: false` while blocks are held: tried again shortly.
 */
async function resetPrefixCache(client: ServerClient): Promise<void> {
  for (let tries = 1; ; tries++) {
    const answer = await client.postIfServed<{ success?: unknown }>('/reset_prefix_cache', {});
    if ('missing' in answer) {
      throw missingRoute(
        client,
        '/reset_prefix_cache',
        answer.missing,
        'the prefix cache must be reset after a weight push (else cached prompts decode on the old weights): start the server with VLLM_SERVER_DEV_MODE=1',
      );
    }
    if (answer.value.success !== false) return;
    if (tries >= PREFIX_RESET_TRIES) {
      throw new DrmasError(
        'SERVICE_FAILED',
        `${client.url}/reset_prefix_cache answered success: false ${tries} times after a weight push`,
        {
          key: client.key,
          hint: 'requests from another client hold cached blocks; give each trained model its own server',
        },
      );
    }
    await sleep(PREFIX_RESET_WAIT_MS);
  }
}

interface SglangGenerate {
  output_ids?: number[];
  meta_info?: {
    finish_reason?: { type?: string; message?: unknown } | null;
    output_token_logprobs?: Array<[number, number, unknown]>;
  };
}

/**
 * Where SGLang reports its weight version, newest first: `/model_info`'s `weight_version` (current main, where
 * `/get_weight_version` and `/weight_version` answer 404 "deprecated. Please use '/model_info' instead"), then the
 * routes of earlier releases.
 */
const SGLANG_VERSION_ROUTES = ['/model_info', '/weight_version', '/get_weight_version'] as const;

async function sglangWeightVersion(client: ServerClient): Promise<{ route: string; version: unknown }> {
  for (const route of SGLANG_VERSION_ROUTES) {
    const answer = await client.getIfServed<{ weight_version?: unknown }>(route);
    if (answer !== undefined && 'weight_version' in answer) return { route, version: answer.weight_version };
  }
  throw missingRoute(
    client,
    SGLANG_VERSION_ROUTES.join(', '),
    '',
    'is this an SGLang server? it reports its weight version at /model_info (or /get_weight_version before 2026)',
  );
}

/**
 * SGLang's native `/generate` with `input_ids`, `return_logprob` (the sampled ids and log-probs as
 * `meta_info.output_token_logprobs` triples) and `sampling_seed`; the stop string kept (`no_stop_trim`). Weights:
 * `/update_weights_from_disk` with `weight_version` (its radix cache flushed by default, `flush_cache`), read back at
 * `/model_info` (older servers: `/get_weight_version`).
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
    const reason = answer.meta_info?.finish_reason;
    return { tokenIds, logProbs: triples.map((t) => t[0]), finishReason: finish(client, route, reason?.type, reason?.message) };
  },
  async probe(client) {
    await sglangWeightVersion(client);
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
    const reported = await sglangWeightVersion(client);
    checkVersion(client, reported.route, reported.version, version);
  },
};

export const DIALECTS: Readonly<Record<RemoteDialect['kind'], RemoteDialect>> = { vllm: vllmDialect, sglang: sglangDialect };
