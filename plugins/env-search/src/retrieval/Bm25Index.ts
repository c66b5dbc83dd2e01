import { SearchInputError } from '../errors.js';
import type { SearchDocument } from './Retriever.js';
import { Tokenizer, type TokenizerOptions } from './Tokenizer.js';

export interface Bm25Options extends TokenizerOptions {
  /** Term-frequency saturation; Pyserini's default 0.9. */
  k1?: number;
  /** Document-length normalisation; Pyserini's default 0.4. */
  b?: number;
}

/** A `SearchHit` that keeps the indexed document's own type. */
export interface Bm25Hit<D extends SearchDocument = SearchDocument> {
  document: D;
  score: number;
}

interface Postings {
  docs: number[];
  freqs: number[];
}

/**
 * An in-memory inverted index scored with BM25 as Lucene (and so Pyserini) computes it:
 *   score(q, d) = Σ_{t ∈ q} idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl))
 *   idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
 * A query term that occurs twice counts twice. Unlike Lucene, document lengths are exact (Lucene stores them
 * lossily in one byte), so scores agree with Pyserini's up to that rounding. Only documents sharing at least one
 * term with the query are returned.
 */
export class Bm25Index<D extends SearchDocument = SearchDocument> {
  readonly k1: number;
  readonly b: number;
  readonly tokenizer: Tokenizer;
  private readonly documents: D[] = [];
  private readonly lengths: number[] = [];
  private readonly postings = new Map<string, Postings>();
  private totalLength = 0;
  private scores = new Float64Array(0);

  constructor(documents: Iterable<D> = [], options: Bm25Options = {}) {
    const { k1 = 0.9, b = 0.4 } = options;
    if (!(Number.isFinite(k1) && k1 >= 0)) throw new SearchInputError('options.k1', `must be a number >= 0, got ${k1}`);
    if (!(Number.isFinite(b) && b >= 0 && b <= 1)) throw new SearchInputError('options.b', `must be in [0, 1], got ${b}`);
    this.k1 = k1;
    this.b = b;
    this.tokenizer = new Tokenizer(options);
    for (const document of documents) this.add(document);
  }

  get size(): number {
    return this.documents.length;
  }

  /** Appends a document; its position breaks score ties (earlier wins). */
  add(document: D): void {
    const index = this.documents.length;
    this.documents.push(document);
    const tokens = this.tokenizer.tokenize(document.contents);
    this.lengths.push(tokens.length);
    this.totalLength += tokens.length;
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [term, freq] of counts) {
      let list = this.postings.get(term);
      if (!list) {
        list = { docs: [], freqs: [] };
        this.postings.set(term, list);
      }
      list.docs.push(index);
      list.freqs.push(freq);
    }
  }

  documentFrequency(term: string): number {
    return this.postings.get(term)?.docs.length ?? 0;
  }

  idf(term: string): number {
    const n = this.documents.length;
    const df = this.documentFrequency(term);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** Hits for one query, best first; equal scores keep document order. */
  search(query: string, topk: number): Array<Bm25Hit<D>> {
    if (!Number.isInteger(topk) || topk < 1) throw new SearchInputError('topk', `must be an integer >= 1, got ${topk}`);
    const n = this.documents.length;
    if (n === 0) return [];
    if (this.scores.length < n) this.scores = new Float64Array(n);
    const scores = this.scores;
    const avgdl = this.totalLength / n;
    const queryCounts = new Map<string, number>();
    for (const token of this.tokenizer.tokenize(query)) queryCounts.set(token, (queryCounts.get(token) ?? 0) + 1);

    const touched: number[] = [];
    for (const [term, queryFreq] of queryCounts) {
      const list = this.postings.get(term);
      if (!list) continue;
      const weight = queryFreq * this.idf(term);
      for (let i = 0; i < list.docs.length; i++) {
        const doc = list.docs[i]!;
        const tf = list.freqs[i]!;
        const norm = this.k1 * (1 - this.b + (this.b * this.lengths[doc]!) / (avgdl || 1));
        const score = scores[doc]!;
        if (score === 0) touched.push(doc);
        scores[doc] = score + (weight * tf) / (tf + norm);
      }
    }

    // A zero idf never happens (idf > 0 for every N), so `scores[doc] === 0` marks untouched documents.
    const ranked = selectTop(touched, scores, topk);
    const hits = ranked.map((doc) => ({ document: this.documents[doc]!, score: scores[doc]! }));
    for (const doc of touched) scores[doc] = 0;
    return hits;
  }

  searchBatch(queries: readonly string[], topk: number): Array<Array<Bm25Hit<D>>> {
    return queries.map((query) => this.search(query, topk));
  }
}

function better(a: number, b: number, scores: Float64Array): boolean {
  return scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
}

/** The `k` best of `candidates`, best first, via a bounded min-heap (worst candidate at the root). */
function selectTop(candidates: number[], scores: Float64Array, k: number): number[] {
  if (candidates.length <= k) return candidates.sort((a, b) => (better(a, b, scores) ? -1 : 1));
  const heap: number[] = [];
  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && better(heap[worst]!, heap[l]!, scores)) worst = l;
      if (r < heap.length && better(heap[worst]!, heap[r]!, scores)) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  };
  for (const doc of candidates) {
    if (heap.length < k) {
      heap.push(doc);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent]!, heap[i]!, scores)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (better(doc, heap[0]!, scores)) {
      heap[0] = doc;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (better(a, b, scores) ? -1 : 1));
}
