import { createHash } from 'node:crypto';
import { OpenAiError } from '../server/OpenAiError.js';

/** Tokens per cached block: vLLM's default `--block-size` on GPUs. Only full blocks are cached, as in vLLM. */
export const PREFIX_BLOCK_TOKENS = 16;
/** Blocks remembered; the oldest are evicted past it (vLLM evicts least recently used blocks when memory runs out). */
const MAX_BLOCKS = 65_536;

/**
 * The bookkeeping of vLLM's automatic prefix caching (on by default in vLLM V1), for the weight routes to be as
 * strict as the real server: every full block of a sampled sequence (prompt and output) is cached under the hash of
 * the tokens up to its end, with the weights it was computed on. vLLM never drops these blocks on a weight reload
 * (`reload_weights` leaves "invalidating any state derived from the old weights" to the caller, and PR #46125
 * reverted the automatic reset: "The decision to reset prefix cache should be left to the user"), so a later prompt
 * sharing such a block is decoded on KV from the old weights, silently. This stand-in cannot compute mixed KV, so it
 * refuses such a prompt with a 409 naming the fix, where vLLM would answer with the stale sample: a client that
 * forgets `POST /reset_prefix_cache` fails here instead of training on samples from neither policy.
 *
 * Behaviour followed: vllm/frontend/entrypoints/serve/dev/cache/api_router.py @055e47c2 (`/reset_prefix_cache`
 * answers `{"success": bool}`, false "while blocks are still held, e.g. by running requests").
 */
export class PrefixCache {
  /** Block hash → the weights generation that computed it. */
  private readonly blocks = new Map<string, number>();
  /** Bumped by every weight reload. */
  private generation = 0;
  /** Sequences being sampled now: they hold their blocks. */
  private running = 0;
  /** Resets that succeeded, and prompts refused for a stale block. */
  readonly stats = { resets: 0, staleRefusals: 0 };

  /** The cache's blocks were computed on other weights from now on (until `reset`). */
  weightsChanged(): void {
    this.generation++;
  }

  /** `/reset_prefix_cache`: drops every block; false (nothing dropped) while a request holds blocks. */
  reset(): boolean {
    if (this.running > 0) return false;
    this.flush();
    return true;
  }

  /** Drops every block at once (SGLang's `flush_cache` after a load, which waits for running requests itself). */
  flush(): void {
    this.blocks.clear();
    this.stats.resets++;
  }

  /**
   * Samples `promptIds` through `sample` (answering the sampled ids), refusing a prompt that starts with a block
   * computed on earlier weights, and caching the full blocks of prompt and output afterwards.
   */
  async serve<T extends { tokenIds: readonly number[] }>(
    scope: string,
    promptIds: readonly number[],
    sample: () => Promise<T>,
  ): Promise<T> {
    const stale = this.staleBlock(scope, promptIds);
    if (stale) {
      this.stats.staleRefusals++;
      throw new OpenAiError(
        409,
        `the prompt's first ${stale.tokens} tokens are in the prefix cache from weights loaded before the last reload ` +
          '(vLLM would decode them on that stale KV, silently); POST /reset_prefix_cache after loading new weights',
        'invalid_request_error',
        'prompt',
        'stale_prefix_cache',
      );
    }
    this.running++;
    try {
      const result = await sample();
      this.remember(scope, [...promptIds, ...result.tokenIds]);
      return result;
    } finally {
      this.running--;
    }
  }

  private staleBlock(scope: string, ids: readonly number[]): { tokens: number } | undefined {
    let tokens = 0;
    for (const hash of blockHashes(scope, ids)) {
      tokens += PREFIX_BLOCK_TOKENS;
      const computedOn = this.blocks.get(hash);
      if (computedOn === undefined) return undefined;
      if (computedOn !== this.generation) return { tokens };
    }
    return undefined;
  }

  private remember(scope: string, ids: readonly number[]): void {
    for (const hash of blockHashes(scope, ids)) {
      if (this.blocks.has(hash)) continue;
      this.blocks.set(hash, this.generation);
      if (this.blocks.size > MAX_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
    }
  }
}

/** Hashes of each full block, chained (a block's hash covers every token before it), per model `scope`. */
function* blockHashes(scope: string, ids: readonly number[]): Generator<string> {
  let previous = scope;
  for (let end = PREFIX_BLOCK_TOKENS; end <= ids.length; end += PREFIX_BLOCK_TOKENS) {
    previous = createHash('sha256')
      .update(previous)
      .update(ids.slice(end - PREFIX_BLOCK_TOKENS, end).join(','))
      .digest('base64');
    yield previous;
  }
}
