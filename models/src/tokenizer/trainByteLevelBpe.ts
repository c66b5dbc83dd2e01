/**
 * Deterministic byte-level BPE training for drmas' built-in tiny models, producing a GPT-2 style tokenizer.json
 * that the Python `tokenizers` library loads too.
 *
 * Vocabulary layout: ids 0..255 are the bytes (byte-level characters) in byte order, then one id per learned
 * merge, then reserved filler tokens if the corpus ran out of pairs, then the special tokens (the last ids).
 * Each step merges the pair with the highest count over the corpus' pre-tokenized words; ties go to the pair
 * with the smallest (left id, right id).
 */
import { AddedTokens } from './AddedTokens.js';
import { byteLevelAlphabet } from './byteLevel.js';
import { DEFAULT_CHAT_TEMPLATE } from './ChatTemplate.js';
import { TokenizerError } from './errors.js';
import { compileTokenizerRegex } from './regexTranslation.js';
import { GPT2_SPLIT_PATTERN, splitByRegex } from './preTokenize.js';
import { DEFAULT_SPECIAL_TOKENS, END_OF_TEXT, IM_END, PAD, reservedTokenName } from './specialTokens.js';
import { Tokenizer } from './Tokenizer.js';
import type { AddedTokenJson, TokenizerConfigJson, TokenizerJson } from './tokenizerJson.js';

export interface TrainByteLevelBpeOptions {
  /** Total size, special tokens included; at least 256 + specialTokens.length. */
  vocabSize: number;
  /** Default: <|endoftext|>, <|im_start|>, <|im_end|>, <pad>. */
  specialTokens?: readonly string[];
  /** Default <|im_end|> when it is a special token, else <|endoftext|> when it is, else none. */
  eosToken?: string;
  /** Default <pad> when it is a special token. */
  padToken?: string;
  /** Default DEFAULT_CHAT_TEMPLATE (ChatML). */
  chatTemplate?: string;
  /** Pairs seen fewer times are not merged (default 1); unused vocabulary is filled with reserved tokens. */
  minFrequency?: number;
}

/** Max-heap of (count, pair key): highest count first, then smallest key. */
class PairHeap {
  private counts: number[] = [];
  private keys: number[] = [];
  get length(): number {
    return this.counts.length;
  }
  private before(i: number, j: number): boolean {
    const ci = this.counts[i]!;
    const cj = this.counts[j]!;
    return ci > cj || (ci === cj && this.keys[i]! < this.keys[j]!);
  }
  private swap(i: number, j: number): void {
    [this.counts[i], this.counts[j]] = [this.counts[j]!, this.counts[i]!];
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
  }
  push(count: number, key: number): void {
    this.counts.push(count);
    this.keys.push(key);
    let i = this.counts.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  /** Only on a non-empty heap. */
  peek(): [number, number] {
    return [this.counts[0]!, this.keys[0]!];
  }
  pop(): void {
    const last = this.counts.length - 1;
    this.swap(0, last);
    this.counts.pop();
    this.keys.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < this.counts.length && this.before(l, best)) best = l;
      if (r < this.counts.length && this.before(r, best)) best = r;
      if (best === i) break;
      this.swap(i, best);
      i = best;
    }
  }
}

/** Pair keys pack two ids below 2^21 into one safe integer. */
const PAIR_BASE = 2 ** 21;

function countWords(corpus: readonly string[], specials: readonly string[]): Map<string, number> {
  const splitter = new AddedTokens(specials.map((content, id) => ({ id, content, special: true })));
  const regex = compileTokenizerRegex(GPT2_SPLIT_PATTERN);
  const counts = new Map<string, number>();
  for (const doc of corpus) {
    for (const segment of splitter.split(doc)) {
      if (segment.text === undefined) continue;
      for (const word of splitByRegex(segment.text, regex, 'Isolated')) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return counts;
}

/** Trains the merges; returns the merged token strings in order (index i -> id 256 + i, before dedup). */
function learnMerges(wordCounts: Map<string, number>, mergesWanted: number, minFrequency: number): [string, string][] {
  const alphabet = byteLevelAlphabet();
  const encoder = new TextEncoder();
  const words: Int32Array[] = [];
  const freqs: number[] = [];
  for (const [word, count] of wordCounts) {
    words.push(Int32Array.from(encoder.encode(word)));
    freqs.push(count);
  }
  const tokenStrings: string[] = [...alphabet];
  const idOf = new Map<string, number>(tokenStrings.map((s, i) => [s, i]));
  const pairCounts = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  for (const [w, word] of words.entries()) {
    for (let i = 0; i + 1 < word.length; i++) {
      const key = word[i]! * PAIR_BASE + word[i + 1]!;
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + freqs[w]!);
      let set = pairWords.get(key);
      if (set === undefined) pairWords.set(key, (set = new Set()));
      set.add(w);
    }
  }
  const heap = new PairHeap();
  for (const [key, count] of pairCounts) heap.push(count, key);

  const merges: [string, string][] = [];
  let newTokens = 0;
  while (newTokens < mergesWanted && heap.length > 0) {
    const [count, key] = heap.peek();
    heap.pop();
    if (pairCounts.get(key) !== count) continue; // stale entry
    if (count < minFrequency) break;
    const a = Math.floor(key / PAIR_BASE);
    const b = key - a * PAIR_BASE;
    // Both halves of a counted pair are ids of tokens already in tokenStrings.
    const left = tokenStrings[a]!;
    const right = tokenStrings[b]!;
    const mergedString = left + right;
    let merged = idOf.get(mergedString);
    if (merged === undefined) {
      merged = tokenStrings.length;
      if (merged >= PAIR_BASE) throw new TokenizerError(`vocabulary too large to train (over ${PAIR_BASE} tokens)`);
      tokenStrings.push(mergedString);
      idOf.set(mergedString, merged);
      newTokens++;
    }
    merges.push([left, right]);

    const changed = new Set<number>();
    const adjust = (word: Int32Array, w: number, sign: number): void => {
      for (let i = 0; i + 1 < word.length; i++) {
        const k = word[i]! * PAIR_BASE + word[i + 1]!;
        pairCounts.set(k, (pairCounts.get(k) ?? 0) + sign * freqs[w]!);
        changed.add(k);
        if (sign > 0) {
          let set = pairWords.get(k);
          if (set === undefined) pairWords.set(k, (set = new Set()));
          set.add(w);
        }
      }
    };
    for (const w of pairWords.get(key) ?? []) {
      const word = words[w]!;
      let has = false;
      for (let i = 0; i + 1 < word.length; i++) if (word[i] === a && word[i + 1] === b) has = true;
      if (!has) continue;
      adjust(word, w, -1);
      const out: number[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i + 1 < word.length && word[i] === a && word[i + 1] === b) {
          out.push(merged);
          i++;
        } else out.push(word[i]!);
      }
      const mergedWord = Int32Array.from(out);
      words[w] = mergedWord;
      adjust(mergedWord, w, +1);
    }
    pairWords.delete(key);
    for (const k of changed) {
      const c = pairCounts.get(k)!;
      if (c > 0) heap.push(c, k);
      else pairCounts.delete(k);
    }
  }
  return merges;
}

/** Tokenizer config for the built-in tokenizers: ChatML template and the given special tokens. */
export function builtInTokenizerConfig(
  specials: readonly string[],
  options: { eosToken?: string; padToken?: string; chatTemplate?: string; unkToken?: string },
): TokenizerConfigJson {
  const has = (t: string) => specials.includes(t);
  const eos = options.eosToken ?? (has(IM_END) ? IM_END : has(END_OF_TEXT) ? END_OF_TEXT : undefined);
  const pad = options.padToken ?? (has(PAD) ? PAD : undefined);
  for (const [key, token] of [
    ['eosToken', eos],
    ['padToken', pad],
  ] as const) {
    if (token !== undefined && !has(token) && token !== options.unkToken) {
      throw new TokenizerError(`${key} ${JSON.stringify(token)} is not one of the special tokens`);
    }
  }
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    add_bos_token: false,
    add_eos_token: false,
    bos_token: null,
    eos_token: eos ?? null,
    pad_token: pad ?? null,
    unk_token: options.unkToken ?? null,
    clean_up_tokenization_spaces: false,
    model_max_length: 1_000_000,
    chat_template: options.chatTemplate ?? DEFAULT_CHAT_TEMPLATE,
  };
}

export function addedTokenJson(id: number, content: string): AddedTokenJson {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/**
 * Trains a byte-level BPE tokenizer with exactly `vocabSize` ids (special tokens included). If the corpus has too
 * few distinct pairs, the remaining ids are reserved special tokens `<|reserved_N|>`.
 */
export function trainByteLevelBpe(corpus: readonly string[], options: TrainByteLevelBpeOptions): Tokenizer {
  const specials = [...(options.specialTokens ?? DEFAULT_SPECIAL_TOKENS)];
  if (new Set(specials).size !== specials.length) throw new TokenizerError('specialTokens contains duplicates');
  const mergesWanted = options.vocabSize - 256 - specials.length;
  if (!Number.isInteger(options.vocabSize) || mergesWanted < 0) {
    throw new TokenizerError(`vocabSize ${options.vocabSize} must be an integer of at least 256 + ${specials.length} special tokens`);
  }
  const merges = learnMerges(countWords(corpus, specials), mergesWanted, options.minFrequency ?? 1);

  const vocab: Record<string, number> = {};
  let size = 0;
  for (const ch of byteLevelAlphabet()) vocab[ch] = size++;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = size++;
  const added: AddedTokenJson[] = [];
  for (let n = 0; size < options.vocabSize - specials.length; n++) added.push(addedTokenJson(size++, reservedTokenName(n)));
  for (const s of specials) added.push(addedTokenJson(size++, s));

  const json: TokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      // Byte-level tokens never contain a space, so the "a b" form (readable by every tokenizers version) is exact.
      merges: merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  return new Tokenizer(json, builtInTokenizerConfig(specials, options));
}
