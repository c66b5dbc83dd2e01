/** The parts of the Hugging Face `tokenizers` JSON format (tokenizer.json) this package reads and writes. */

export interface AddedTokenJson {
  id: number;
  content: string;
  single_word?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  normalized?: boolean;
  special?: boolean;
}

/** A `{type, ...}` component (normalizer, pre-tokenizer, post-processor, decoder); fields depend on the type. */
export interface ComponentJson {
  type: string;
  [field: string]: unknown;
}

export interface BpeModelJson {
  type: 'BPE';
  dropout?: number | null;
  unk_token?: string | null;
  continuing_subword_prefix?: string | null;
  end_of_word_suffix?: string | null;
  fuse_unk?: boolean;
  byte_fallback?: boolean;
  ignore_merges?: boolean;
  vocab: Record<string, number>;
  /** "a b" strings (tokenizers < 0.20) or [a, b] pairs. */
  merges: (string | [string, string])[];
}

export interface WordLevelModelJson {
  type: 'WordLevel';
  vocab: Record<string, number>;
  unk_token?: string | null;
}

export interface TokenizerJson {
  version?: string;
  truncation?: unknown;
  padding?: unknown;
  added_tokens?: AddedTokenJson[];
  normalizer?: ComponentJson | null;
  pre_tokenizer?: ComponentJson | null;
  post_processor?: ComponentJson | null;
  decoder?: ComponentJson | null;
  model: BpeModelJson | WordLevelModelJson | { type: string; [field: string]: unknown };
}

/** A special token in tokenizer_config.json: a plain string or a serialized AddedToken. */
export type SpecialTokenJson = string | { content: string; [field: string]: unknown } | null;

export interface TokenizerConfigJson {
  bos_token?: SpecialTokenJson;
  eos_token?: SpecialTokenJson;
  pad_token?: SpecialTokenJson;
  unk_token?: SpecialTokenJson;
  add_bos_token?: boolean;
  add_eos_token?: boolean;
  chat_template?: string | { name: string; template: string }[];
  clean_up_tokenization_spaces?: boolean;
  /** transformers 5's opt-in to clean up BPE output anyway (see `Tokenizer`'s clean-up rule). */
  clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output?: boolean;
  model_max_length?: number;
  tokenizer_class?: string;
  [field: string]: unknown;
}
