import { Bm25Index, type Bm25Options } from './Bm25Index.js';
import type { Retriever, SearchDocument, SearchHit } from './Retriever.js';

/**
 * The BM25 index behind the `Retriever` interface, for in-process use or behind `startRetrieverServer`. Hits carry
 * only `id` and `contents`, exactly what a `RetrieverClient` returns, so the two are interchangeable.
 */
export class Bm25Retriever implements Retriever {
  readonly index: Bm25Index;

  constructor(documents: Iterable<SearchDocument>, options: Bm25Options = {}) {
    this.index = new Bm25Index(projected(documents), options);
  }

  async search(queries: string[], topk: number): Promise<SearchHit[][]> {
    return this.index.searchBatch(queries, topk);
  }
}

function* projected(documents: Iterable<SearchDocument>): Iterable<SearchDocument> {
  for (const { id, contents } of documents) yield { id, contents };
}
