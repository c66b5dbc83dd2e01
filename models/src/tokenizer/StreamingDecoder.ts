/**
 * Incremental decoding for token streaming and stop strings: each `push` returns only text made of complete
 * characters, holding back the bytes of a UTF-8 character split across tokens until its last byte arrives.
 */
import type { DecodeOptions, Tokenizer } from './Tokenizer.js';

export class StreamingDecoder {
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly skipSpecial: boolean;
  /** For tokenizers whose decoder is not byte-wise: ids since the start, and the text already returned. */
  private readonly ids: number[] = [];
  private emittedLength = 0;
  private emitted = '';

  constructor(
    private readonly tokenizer: Tokenizer,
    options: DecodeOptions = {},
  ) {
    this.skipSpecial = options.skipSpecialTokens === true;
  }

  /** All text returned so far. */
  get text(): string {
    return this.emitted;
  }

  /** Adds one token; returns the newly completed text (often empty mid-character). */
  push(id: number): string {
    if (this.skipSpecial && this.tokenizer.isSpecialTokenId(id)) return '';
    let out: string;
    if (this.tokenizer.decodesBytewise) {
      const bytes = this.tokenizer.tokenBytes(id);
      out = bytes === undefined ? '' : this.utf8.decode(bytes, { stream: true });
    } else {
      this.ids.push(id);
      const full = this.tokenizer.decode(this.ids);
      // A trailing U+FFFD may be a character whose remaining bytes are still to come.
      if (full.endsWith('\uFFFD')) return '';
      out = full.slice(this.emittedLength);
      this.emittedLength = full.length;
    }
    this.emitted += out;
    return out;
  }

  pushAll(ids: Iterable<number>): string {
    let out = '';
    for (const id of ids) out += this.push(id);
    return out;
  }

  /** Ends the stream: returns what is held back (incomplete characters decode to U+FFFD). */
  flush(): string {
    let out: string;
    if (this.tokenizer.decodesBytewise) {
      out = this.utf8.decode();
    } else {
      const full = this.tokenizer.decode(this.ids);
      out = full.slice(this.emittedLength);
      this.emittedLength = full.length;
    }
    this.emitted += out;
    return out;
  }
}
