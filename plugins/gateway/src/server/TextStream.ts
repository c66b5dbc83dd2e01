import type { TextCodec } from '@drmas/core';

/**
 * The text of sampled tokens as it becomes final, for streaming: it holds back a byte-level token that ends inside a
 * UTF-8 character (decoded as U+FFFD) and any tail that could be the start of a stop string, and ends the text before
 * the first stop string (OpenAI leaves the stop sequence out of the text; its tokens stay in `token_ids`).
 */
export class TextStream {
  private readonly ids: number[] = [];
  private shown = '';
  private stopped = false;

  constructor(
    private readonly codec: TextCodec | undefined,
    private readonly stop: readonly string[],
  ) {}

  /** Adds a sampled token; answers the text that became final (often ''). */
  push(tokenId: number): string {
    this.ids.push(tokenId);
    if (this.stopped) return '';
    const text = this.decode();
    const end = this.stopAt(text);
    if (end >= 0) {
      this.stopped = true;
      return this.show(text.slice(0, end));
    }
    if (text.endsWith('\uFFFD')) return '';
    return this.show(text.slice(0, text.length - this.heldBack(text)));
  }

  /** The rest of the text once sampling ended. */
  finish(): string {
    if (this.stopped) return '';
    const text = this.decode();
    const end = this.stopAt(text);
    return this.show(end >= 0 ? text.slice(0, end) : text);
  }

  /** Everything shown so far (after `finish`, the whole text). */
  get text(): string {
    return this.shown;
  }

  private decode(): string {
    return this.codec ? this.codec.decode(this.ids, { skipSpecialTokens: true }) : '';
  }

  private show(upTo: string): string {
    // A later token may re-render what came before (rare with byte-level BPE); then wait for `finish`.
    if (!upTo.startsWith(this.shown)) return '';
    const delta = upTo.slice(this.shown.length);
    this.shown = upTo;
    return delta;
  }

  private stopAt(text: string): number {
    let at = -1;
    for (const s of this.stop) {
      const i = text.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    return at;
  }

  /** Length of the longest tail of `text` that is a proper prefix of a stop string. */
  private heldBack(text: string): number {
    let longest = 0;
    for (const s of this.stop) {
      for (let n = Math.min(s.length - 1, text.length); n > longest; n--) {
        if (text.endsWith(s.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
