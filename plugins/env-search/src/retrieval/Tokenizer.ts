/** Lucene's English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), the set Pyserini's BM25 indexes drop. */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

export interface TokenizerOptions {
  /** `true` (default): drop `ENGLISH_STOPWORDS`; `false`: keep every token; or a set of your own. */
  stopwords?: boolean | ReadonlySet<string>;
}

const NON_ALPHANUMERIC = /[^\p{L}\p{N}]+/u;

/** Lower-cases and splits on runs of characters that are neither letters nor digits. No stemming. */
export class Tokenizer {
  private readonly stopwords: ReadonlySet<string> | undefined;

  constructor(options: TokenizerOptions = {}) {
    const { stopwords = true } = options;
    this.stopwords = stopwords === true ? ENGLISH_STOPWORDS : stopwords === false ? undefined : stopwords;
  }

  tokenize(text: string): string[] {
    const tokens: string[] = [];
    for (const piece of text.toLowerCase().split(NON_ALPHANUMERIC)) {
      if (piece.length > 0 && !this.stopwords?.has(piece)) tokens.push(piece);
    }
    return tokens;
  }
}
