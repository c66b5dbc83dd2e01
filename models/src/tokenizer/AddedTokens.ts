/**
 * Added tokens (special tokens such as "<|im_start|>" and extra tokens such as "<tool_call>") are found in the
 * raw text before normalization and pre-tokenization, leftmost and longest first, and map straight to their ids.
 */
import type { AddedTokenJson } from './tokenizerJson.js';

export type TextSegment = { text: string; id?: undefined } | { id: number; text?: undefined };

const WORD_CHAR = /[\p{L}\p{N}_]/u;
const WHITESPACE = /\s/u;

export class AddedTokens {
  private readonly byContent = new Map<string, AddedTokenJson>();
  private readonly byId = new Map<number, AddedTokenJson>();
  private readonly regex: RegExp | undefined;

  constructor(readonly tokens: readonly AddedTokenJson[]) {
    for (const t of tokens) {
      this.byContent.set(t.content, t);
      this.byId.set(t.id, t);
    }
    const contents = [...this.byContent.keys()].filter((c) => c.length > 0).sort((a, b) => b.length - a.length);
    if (contents.length > 0) {
      this.regex = new RegExp(contents.map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|'), 'gu');
    }
  }

  get(content: string): AddedTokenJson | undefined {
    return this.byContent.get(content);
  }

  byTokenId(id: number): AddedTokenJson | undefined {
    return this.byId.get(id);
  }

  isSpecial(id: number): boolean {
    return this.byId.get(id)?.special === true;
  }

  get maxId(): number {
    let max = -1;
    for (const id of this.byId.keys()) max = Math.max(max, id);
    return max;
  }

  /** Splits `text` into plain text segments and added-token ids. */
  split(text: string): TextSegment[] {
    if (this.regex === undefined || text.length === 0) return text.length === 0 ? [] : [{ text }];
    const out: TextSegment[] = [];
    const regex = this.regex;
    regex.lastIndex = 0;
    let last = 0;
    for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
      const token = this.byContent.get(m[0])!;
      let start = m.index;
      let end = start + m[0].length;
      if (token.single_word && ((start > 0 && WORD_CHAR.test(text[start - 1]!)) || (end < text.length && WORD_CHAR.test(text[end]!)))) {
        regex.lastIndex = start + 1;
        continue;
      }
      if (token.lstrip) while (start > last && WHITESPACE.test(text[start - 1]!)) start--;
      if (token.rstrip) while (end < text.length && WHITESPACE.test(text[end]!)) end++;
      if (start > last) out.push({ text: text.slice(last, start) });
      out.push({ id: token.id });
      last = end;
      regex.lastIndex = end;
    }
    if (last < text.length) out.push({ text: text.slice(last) });
    return out;
  }
}
