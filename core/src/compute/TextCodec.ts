/** A chat message for chat templates. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | (string & {});
  content: string;
  /** Template-specific fields (tool calls, names, ...). */
  [field: string]: unknown;
}

/**
 * What the framework needs of a tokenizer: text to ids and back, and the model's chat formatting. Prompts are
 * encoded once; responses are kept as sampled ids and decoded only for parsing and logs.
 */
export interface TextCodec {
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  /** Renders messages with the tokenizer's chat template; undefined when the tokenizer has none. */
  applyChatTemplate?(messages: readonly ChatMessage[], options?: { addGenerationPrompt?: boolean; tools?: unknown[] }): string;
  readonly chatTemplate?: string | undefined;
  readonly eosTokenId?: number | undefined;
  readonly vocabSize: number;
}
