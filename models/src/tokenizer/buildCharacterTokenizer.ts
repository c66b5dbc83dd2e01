/**
 * Character-level tokenizers for the smallest built-in models: one token per Unicode code point of an alphabet,
 * expressed as a BPE model with no merges (so the Python `tokenizers` library loads it unchanged).
 *
 * Vocabulary layout: the alphabet's characters sorted by code point, then the unk token, then reserved filler
 * tokens up to `vocabSize` when given, then the special tokens (the last ids).
 */
import { TokenizerError } from './errors.js';
import { DEFAULT_SPECIAL_TOKENS, reservedTokenName } from './specialTokens.js';
import { Tokenizer } from './Tokenizer.js';
import { addedTokenJson, builtInTokenizerConfig } from './trainByteLevelBpe.js';
import type { AddedTokenJson, TokenizerJson } from './tokenizerJson.js';

export interface CharacterTokenizerOptions {
  /** Default: <|endoftext|>, <|im_start|>, <|im_end|>, <pad>. */
  specialTokens?: readonly string[];
  /** Token for characters outside the alphabet; default "<unk>". */
  unkToken?: string;
  /** Pad the vocabulary with reserved tokens to exactly this size. */
  vocabSize?: number;
  eosToken?: string;
  padToken?: string;
  chatTemplate?: string;
}

/** Builds a character tokenizer from an alphabet string or from the characters of a corpus. */
export function buildCharacterTokenizer(alphabetOrCorpus: string | readonly string[], options: CharacterTokenizerOptions = {}): Tokenizer {
  const specials = [...(options.specialTokens ?? DEFAULT_SPECIAL_TOKENS)];
  const unk = options.unkToken ?? '<unk>';
  if (specials.includes(unk)) throw new TokenizerError(`unkToken ${JSON.stringify(unk)} must not also be a special token`);
  const chars = new Set<string>();
  for (const text of typeof alphabetOrCorpus === 'string' ? [alphabetOrCorpus] : alphabetOrCorpus) for (const ch of text) chars.add(ch);
  const sorted = [...chars].sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!);

  const vocab: Record<string, number> = {};
  let size = 0;
  for (const ch of sorted) vocab[ch] = size++;
  vocab[unk] = size++;
  const target = options.vocabSize ?? size + specials.length;
  if (target < size + specials.length) {
    throw new TokenizerError(`vocabSize ${target} is too small for ${sorted.length} characters + unk + ${specials.length} special tokens`);
  }
  const added: AddedTokenJson[] = [addedTokenJson(vocab[unk], unk)];
  for (let n = 0; size < target - specials.length; n++) added.push(addedTokenJson(size++, reservedTokenName(n)));
  for (const s of specials) added.push(addedTokenJson(size++, s));

  const json: TokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: unk,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
  return new Tokenizer(json, builtInTokenizerConfig(specials, { ...options, unkToken: unk }));
}
