/**
 * A Hugging Face fast tokenizer (tokenizer.json + tokenizer_config.json) in plain TypeScript: byte-level BPE
 * (GPT-2, Qwen2, Llama-3 style), character-level BPE/WordLevel, added tokens, chat templates.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AddedTokens } from './AddedTokens.js';
import { BpeModel, WordLevelModel, type TokenizerModel } from './BpeModel.js';
import { ChatTemplateRenderer, selectChatTemplate, type ChatMessage, type ChatTemplateOptions } from './ChatTemplate.js';
import { buildDecoder, type TokenDecoder } from './decoders.js';
import { TokenizerError } from './errors.js';
import { buildPostProcessor, type PostProcessor } from './postProcess.js';
import { buildNormalizer, buildPreTokenizer, type Normalizer, type PreTokenizer } from './preTokenize.js';
import { StreamingDecoder } from './StreamingDecoder.js';
import type { BpeModelJson, SpecialTokenJson, TokenizerConfigJson, TokenizerJson, WordLevelModelJson } from './tokenizerJson.js';

export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';

export interface EncodeOptions {
  /** Add BOS/EOS or template tokens as the tokenizer is configured to (default true, as in transformers). */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Drop added tokens marked special (default false). */
  skipSpecialTokens?: boolean;
}

export interface TokenizerSource {
  /** File names in error messages. */
  file?: string;
}

function specialTokenContent(value: SpecialTokenJson | undefined): string | undefined {
  if (value == null) return undefined;
  return typeof value === 'string' ? value : value.content;
}

async function readJsonIfPresent(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TokenizerError(`cannot read: ${(err as Error).message}`, file);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new TokenizerError(`not valid JSON: ${(err as Error).message}`, file);
  }
}

function cleanUpTokenizationSpaces(text: string): string {
  return text
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}

export class Tokenizer {
  private readonly json: TokenizerJson;
  private readonly config: TokenizerConfigJson;
  private readonly model: TokenizerModel;
  private readonly added: AddedTokens;
  private readonly normalizer: Normalizer | undefined;
  private readonly preTokenizer: PreTokenizer | undefined;
  private readonly postProcessor: PostProcessor | undefined;
  private readonly decoder: TokenDecoder;
  private readonly templates = new ChatTemplateRenderer();
  private readonly cleanUp: boolean;

  readonly vocabSize: number;
  readonly bosToken?: string;
  readonly eosToken?: string;
  readonly padToken?: string;
  readonly unkToken?: string;
  readonly bosTokenId?: number;
  readonly eosTokenId?: number;
  readonly padTokenId?: number;
  readonly unkTokenId?: number;

  constructor(json: TokenizerJson, config: TokenizerConfigJson = {}, source: TokenizerSource = {}) {
    const file = source.file;
    if (json === null || typeof json !== 'object' || json.model == null || typeof json.model !== 'object') {
      throw new TokenizerError('not a tokenizers JSON file: it has no "model" object', file);
    }
    this.json = json;
    this.config = config;
    switch (json.model.type) {
      case 'BPE':
        this.model = new BpeModel(json.model as BpeModelJson, file);
        break;
      case 'WordLevel':
        this.model = new WordLevelModel(json.model as WordLevelModelJson, file);
        break;
      default:
        throw new TokenizerError(
          `model type "${json.model.type}" is not supported (supported: BPE, WordLevel); Unigram/WordPiece tokenizers cannot be loaded`,
          file,
        );
    }
    this.added = new AddedTokens(json.added_tokens ?? []);
    this.normalizer = buildNormalizer(json.normalizer, file);
    this.preTokenizer = buildPreTokenizer(json.pre_tokenizer, file);
    this.decoder = buildDecoder(json.decoder, file);
    const post = json.post_processor;
    const postAddsTokens = post != null && post.type !== 'ByteLevel';
    const processor = buildPostProcessor(post, file);
    if (postAddsTokens) {
      this.postProcessor = processor;
    }
    // transformers 5 (5.24.0, `TokenizersBackend._decode` in tokenization_utils_tokenizers.py) ignores
    // clean_up_tokenization_spaces for BPE models: the clean-up was made for WordPiece and strips real spaces before
    // punctuation from BPE output (Llama 3's config asks for it, and `x ?? 0` would decode to `x?? 0`).
    this.cleanUp =
      config.clean_up_tokenization_spaces === true &&
      (this.model.type !== 'BPE' || config.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output === true);
    this.vocabSize = Math.max(this.model.size, this.added.maxId + 1);

    const resolve = (key: 'bos_token' | 'eos_token' | 'pad_token' | 'unk_token'): [string | undefined, number | undefined] => {
      const content = specialTokenContent(config[key]);
      if (content === undefined) return [undefined, undefined];
      const id = this.tokenToId(content);
      if (id === undefined && key !== 'unk_token') {
        throw new TokenizerError(`${key} ${JSON.stringify(content)} of tokenizer_config.json is not a token of the tokenizer`, file);
      }
      return [content, id];
    };
    [this.bosToken, this.bosTokenId] = resolve('bos_token');
    [this.eosToken, this.eosTokenId] = resolve('eos_token');
    [this.padToken, this.padTokenId] = resolve('pad_token');
    [this.unkToken, this.unkTokenId] = resolve('unk_token');

    if (!postAddsTokens && (config.add_bos_token === true || config.add_eos_token === true)) {
      const bos = config.add_bos_token === true ? this.bosTokenId : undefined;
      const eos = config.add_eos_token === true ? this.eosTokenId : undefined;
      if (config.add_bos_token === true && bos === undefined)
        throw new TokenizerError('add_bos_token is set but there is no bos_token', file);
      if (config.add_eos_token === true && eos === undefined)
        throw new TokenizerError('add_eos_token is set but there is no eos_token', file);
      this.postProcessor = (ids) => [...(bos === undefined ? [] : [bos]), ...ids, ...(eos === undefined ? [] : [eos])];
    }
  }

  /**
   * Loads tokenizer.json and, when present, tokenizer_config.json, special_tokens_map.json (older checkpoints
   * keep special tokens there) and chat_template.jinja. Returns undefined when the folder has no tokenizer.json.
   */
  static async fromDirectory(dir: string): Promise<Tokenizer | undefined> {
    const tokenizerFile = join(dir, TOKENIZER_FILE);
    const json = await readJsonIfPresent(tokenizerFile);
    if (json === undefined) return undefined;
    const config = ((await readJsonIfPresent(join(dir, TOKENIZER_CONFIG_FILE))) ?? {}) as TokenizerConfigJson;
    const specialMap = await readJsonIfPresent(join(dir, 'special_tokens_map.json'));
    for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token'] as const) {
      if (config[key] === undefined && specialMap?.[key] !== undefined) config[key] = specialMap[key] as SpecialTokenJson;
    }
    if (config.chat_template === undefined) {
      try {
        config.chat_template = await readFile(join(dir, 'chat_template.jinja'), 'utf8');
      } catch {
        const legacy = await readJsonIfPresent(join(dir, 'chat_template.json'));
        if (typeof legacy?.chat_template === 'string') config.chat_template = legacy.chat_template;
      }
    }
    return new Tokenizer(json as unknown as TokenizerJson, config, { file: tokenizerFile });
  }

  static fromJSON(json: TokenizerJson, config: TokenizerConfigJson = {}): Tokenizer {
    return new Tokenizer(json, config);
  }

  tokenToId(token: string): number | undefined {
    return this.added.get(token)?.id ?? this.model.tokenToId(token);
  }

  idToToken(id: number): string | undefined {
    return this.added.byTokenId(id)?.content ?? this.model.idToToken(id);
  }

  /** Whether `id` is an added token marked special (skipped by `decode` with skipSpecialTokens). */
  isSpecialTokenId(id: number): boolean {
    return this.added.isSpecial(id);
  }

  /** Ids of all added tokens marked special. */
  get specialTokenIds(): number[] {
    return this.added.tokens.filter((t) => t.special === true).map((t) => t.id);
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const ids: number[] = [];
    for (const segment of this.added.split(text)) {
      if (segment.id !== undefined) {
        ids.push(segment.id);
        continue;
      }
      const normalized = this.normalizer ? this.normalizer(segment.text) : segment.text;
      const pieces = this.preTokenizer ? this.preTokenizer([normalized]) : [normalized];
      for (const piece of pieces) {
        if (piece.length > 0) for (const id of this.model.encodeWord(piece)) ids.push(id);
      }
    }
    return options.addSpecialTokens !== false && this.postProcessor ? this.postProcessor(ids) : ids;
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    const tokens: string[] = [];
    for (const id of ids) {
      if (options.skipSpecialTokens && this.added.isSpecial(id)) continue;
      // Ids past the tokenizer (a model vocabulary padded beyond it) decode to nothing, as in `tokenizers`.
      const token = this.idToToken(id);
      if (token !== undefined) tokens.push(token);
    }
    const text = this.decoder.decode(tokens);
    return this.cleanUp ? cleanUpTokenizationSpaces(text) : text;
  }

  /**
   * The bytes token `id` contributes to decoded text, when the decoder works byte-wise (byte-level BPE and
   * character tokenizers); undefined otherwise or for unknown ids.
   */
  tokenBytes(id: number): Uint8Array | undefined {
    const token = this.idToToken(id);
    if (token === undefined || this.decoder.tokenBytes === undefined || this.cleanUp) return undefined;
    return this.decoder.tokenBytes(token);
  }

  /** Whether `tokenBytes` works for this tokenizer. */
  get decodesBytewise(): boolean {
    return this.decoder.tokenBytes !== undefined && !this.cleanUp;
  }

  /** A decoder to feed generated ids one by one; it returns only complete characters. */
  createStreamingDecoder(options: DecodeOptions = {}): StreamingDecoder {
    return new StreamingDecoder(this, options);
  }

  /** Yields the text of `ids` piece by piece as complete characters become available. */
  *decodeIncremental(ids: Iterable<number>, options: DecodeOptions = {}): Generator<string> {
    const decoder = this.createStreamingDecoder(options);
    for (const id of ids) {
      const text = decoder.push(id);
      if (text.length > 0) yield text;
    }
    const rest = decoder.flush();
    if (rest.length > 0) yield rest;
  }

  get chatTemplate(): string | undefined {
    return selectChatTemplate(this.config.chat_template, false);
  }

  /** Renders messages with the tokenizer's chat template (or `options.chatTemplate`). */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    const { addGenerationPrompt, tools, chatTemplate, ...extra } = options;
    const template = chatTemplate ?? selectChatTemplate(this.config.chat_template, tools !== undefined && tools.length > 0);
    if (template === undefined) {
      throw new TokenizerError(
        'the tokenizer has no chat_template in tokenizer_config.json; pass { chatTemplate } (e.g. DEFAULT_CHAT_TEMPLATE)',
      );
    }
    const specials: Record<string, string> = {};
    for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token'] as const) {
      const content = specialTokenContent(this.config[key]);
      if (content !== undefined) specials[key] = content;
    }
    return this.templates.render(template, messages, {
      ...specials,
      ...extra,
      tools: tools ?? null,
      add_generation_prompt: addGenerationPrompt === true,
    });
  }

  /** The tokenizer.json contents. */
  toJSON(): TokenizerJson {
    return this.json;
  }

  /** The tokenizer_config.json contents. */
  get tokenizerConfig(): TokenizerConfigJson {
    return this.config;
  }

  /** Writes tokenizer.json and tokenizer_config.json into `dir` (created if needed). */
  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, TOKENIZER_FILE), JSON.stringify(this.json, null, 2) + '\n');
    await writeFile(join(dir, TOKENIZER_CONFIG_FILE), JSON.stringify(this.config, null, 2) + '\n');
  }
}
