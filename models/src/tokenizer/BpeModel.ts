/**
 * The BPE model of tokenizer.json: a word is split into characters (byte-level characters for byte-level BPE),
 * then adjacent pairs are merged, lowest merge rank first and leftmost first among equal ranks, as `tokenizers`
 * does. With no merges and single-character tokens this is a character-level tokenizer.
 */
import { TokenizerError } from './errors.js';
import type { BpeModelJson, WordLevelModelJson } from './tokenizerJson.js';

export interface TokenizerModel {
  readonly type: 'BPE' | 'WordLevel';
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** One past the largest id. */
  readonly size: number;
  encodeWord(word: string): number[];
}

const CACHE_LIMIT = 20_000;
const CACHEABLE_WORD_LENGTH = 256;

/** Min-heap of numbers. */
class NumberHeap {
  private items: number[] = [];
  get length(): number {
    return this.items.length;
  }
  push(value: number): void {
    const a = this.items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = a[parent]!;
      if (p <= value) break;
      a[i] = p;
      i = parent;
    }
    a[i] = value;
  }
  /** Only on a non-empty heap. */
  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]! < a[l]! ? r : l;
        const child = a[c]!;
        if (child >= last) break;
        a[i] = child;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

function vocabArrays(vocab: Record<string, number>, file?: string): [Map<string, number>, string[]] {
  const map = new Map<string, number>();
  const tokens: string[] = [];
  for (const [token, id] of Object.entries(vocab)) {
    if (!Number.isInteger(id) || id < 0) throw new TokenizerError(`vocab entry ${JSON.stringify(token)} has invalid id ${id}`, file);
    map.set(token, id);
    tokens[id] = token;
  }
  return [map, tokens];
}

export function parseMerge(merge: string | [string, string], index: number, file?: string): [string, string] {
  if (Array.isArray(merge)) {
    if (merge.length !== 2) throw new TokenizerError(`merge #${index} ${JSON.stringify(merge)} is not a pair`, file);
    return merge;
  }
  const space = merge.indexOf(' ', 1);
  if (space < 0) throw new TokenizerError(`merge #${index} ${JSON.stringify(merge)} is not "left right"`, file);
  return [merge.slice(0, space), merge.slice(space + 1)];
}

export class BpeModel implements TokenizerModel {
  readonly type = 'BPE' as const;
  private readonly vocab: Map<string, number>;
  private readonly tokens: string[];
  /** (left id * pairBase + right id) -> rank * pairBase + merged id. */
  private readonly merges = new Map<number, number>();
  private readonly pairBase: number;
  private readonly unkId: number | undefined;
  private readonly fuseUnk: boolean;
  private readonly byteFallback: boolean;
  private readonly ignoreMerges: boolean;
  private readonly cache = new Map<string, number[]>();

  constructor(json: BpeModelJson, file?: string) {
    if (json.continuing_subword_prefix || json.end_of_word_suffix) {
      throw new TokenizerError('BPE with continuing_subword_prefix or end_of_word_suffix is not supported', file);
    }
    [this.vocab, this.tokens] = vocabArrays(json.vocab, file);
    this.pairBase = this.tokens.length + 1;
    const merges = json.merges ?? [];
    merges.forEach((merge, rank) => {
      const [a, b] = parseMerge(merge, rank, file);
      const left = this.vocab.get(a);
      const right = this.vocab.get(b);
      const merged = this.vocab.get(a + b);
      if (left === undefined || right === undefined || merged === undefined) {
        throw new TokenizerError(`merge #${rank} "${a} ${b}" uses a token missing from the vocab`, file);
      }
      const key = left * this.pairBase + right;
      // Like `tokenizers`, a repeated merge keeps its last rank.
      this.merges.set(key, rank * this.pairBase + merged);
    });
    if (json.unk_token != null) {
      this.unkId = this.vocab.get(json.unk_token);
      if (this.unkId === undefined) throw new TokenizerError(`unk_token ${JSON.stringify(json.unk_token)} is not in the vocab`, file);
    }
    this.fuseUnk = json.fuse_unk === true;
    this.byteFallback = json.byte_fallback === true;
    this.ignoreMerges = json.ignore_merges === true;
  }

  get size(): number {
    return this.tokens.length;
  }

  tokenToId(token: string): number | undefined {
    return this.vocab.get(token);
  }

  idToToken(id: number): string | undefined {
    return this.tokens[id];
  }

  private initialSymbols(word: string): number[] {
    const ids: number[] = [];
    let previousUnk = false;
    for (const ch of word) {
      const id = this.vocab.get(ch);
      if (id !== undefined) {
        ids.push(id);
        previousUnk = false;
        continue;
      }
      if (this.byteFallback) {
        const bytes = new TextEncoder().encode(ch);
        const byteIds = [...bytes].map((b) => this.vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`));
        if (byteIds.every((b) => b !== undefined)) {
          ids.push(...byteIds);
          previousUnk = false;
          continue;
        }
      }
      if (this.unkId === undefined) {
        throw new TokenizerError(
          `character ${JSON.stringify(ch)} (U+${ch.codePointAt(0)!.toString(16).toUpperCase()}) is not in the vocab and the model has no unk_token`,
        );
      }
      if (!(this.fuseUnk && previousUnk)) ids.push(this.unkId);
      previousUnk = true;
    }
    return ids;
  }

  private merge(symbols: number[]): number[] {
    const n = symbols.length;
    if (n < 2 || this.merges.size === 0) return symbols;
    const ids = Int32Array.from(symbols);
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    const alive = new Uint8Array(n).fill(1);
    const base = this.pairBase;
    // Heap entries pack (rank, position) so that lower rank, then leftmost position, pops first.
    const heap = new NumberHeap();
    const consider = (i: number): void => {
      if (i < 0) return;
      const j = next[i]!;
      if (j < 0) return;
      const m = this.merges.get(ids[i]! * base + ids[j]!);
      if (m !== undefined) heap.push(Math.floor(m / base) * n + i);
    };
    for (let i = 0; i + 1 < n; i++) consider(i);
    while (heap.length > 0) {
      const entry = heap.pop();
      const rank = Math.floor(entry / n);
      const i = entry - rank * n;
      const j = next[i]!;
      if (!alive[i] || j < 0) continue;
      const m = this.merges.get(ids[i]! * base + ids[j]!);
      if (m === undefined || Math.floor(m / base) !== rank) continue;
      ids[i] = m % base;
      alive[j] = 0;
      const after = next[j]!;
      next[i] = after;
      if (after >= 0) prev[after] = i;
      consider(prev[i]!);
      consider(i);
    }
    const out: number[] = [];
    for (let i = 0; i >= 0; i = next[i]!) out.push(ids[i]!);
    return out;
  }

  encodeWord(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached !== undefined) return cached.slice();
    let result: number[];
    const whole = this.ignoreMerges ? this.vocab.get(word) : undefined;
    if (whole !== undefined) result = [whole];
    else result = this.merge(this.initialSymbols(word));
    if (word.length <= CACHEABLE_WORD_LENGTH) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(word, result);
      return result.slice();
    }
    return result;
  }
}

/** The WordLevel model: each pre-tokenized piece is looked up whole; unknown pieces become the unk token. */
export class WordLevelModel implements TokenizerModel {
  readonly type = 'WordLevel' as const;
  private readonly vocab: Map<string, number>;
  private readonly tokens: string[];
  private readonly unkId: number | undefined;

  constructor(json: WordLevelModelJson, file?: string) {
    [this.vocab, this.tokens] = vocabArrays(json.vocab, file);
    if (json.unk_token != null) {
      this.unkId = this.vocab.get(json.unk_token);
      if (this.unkId === undefined) throw new TokenizerError(`unk_token ${JSON.stringify(json.unk_token)} is not in the vocab`, file);
    }
  }

  get size(): number {
    return this.tokens.length;
  }

  tokenToId(token: string): number | undefined {
    return this.vocab.get(token);
  }

  idToToken(id: number): string | undefined {
    return this.tokens[id];
  }

  encodeWord(word: string): number[] {
    const id = this.vocab.get(word) ?? this.unkId;
    if (id === undefined) throw new TokenizerError(`${JSON.stringify(word)} is not in the vocab and the model has no unk_token`);
    return [id];
  }
}
