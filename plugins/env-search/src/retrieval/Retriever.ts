/** A corpus passage in Search-R1 format: `contents` is `"title"\ntext`. */
export interface SearchDocument {
  id: string;
  contents: string;
}

export interface SearchHit {
  document: SearchDocument;
  score: number;
}

/**
 * What the search environment needs from a retriever. The in-process `Bm25Retriever` and the HTTP
 * `RetrieverClient` both implement it, so either can be plugged in.
 */
export interface Retriever {
  /** One hit list per query, best first, at most `topk` hits each. */
  search(queries: string[], topk: number): Promise<SearchHit[][]>;
}

/** Splits Search-R1 `contents` into title (first line, surrounding quotes removed) and text (the rest). */
export function splitContents(contents: string): { title: string; text: string } {
  const newline = contents.indexOf('\n');
  const firstLine = newline < 0 ? contents : contents.slice(0, newline);
  const text = newline < 0 ? '' : contents.slice(newline + 1);
  const title = firstLine.length >= 2 && firstLine.startsWith('"') && firstLine.endsWith('"') ? firstLine.slice(1, -1) : firstLine;
  return { title, text };
}

/** Builds Search-R1 `contents` from a title and a text. */
export function joinContents(title: string, text: string): string {
  return `"${title}"\n${text}`;
}
