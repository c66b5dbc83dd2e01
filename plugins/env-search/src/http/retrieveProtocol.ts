import { SearchEnvError } from '../errors.js';
import type { SearchDocument, SearchHit } from '../retrieval/Retriever.js';

/**
 * Wire format of Search-R1's `retrieval_server.py` (also used by Dr. MAS):
 *   request  POST /retrieve {"queries": ["..."], "topk": 3, "return_scores": true}   ("query" accepted too)
 *   response {"result": [[{"document": {"id", "contents"}, "score": 1.2}, ...], ...]}   one list per query;
 *            without return_scores the inner items are the documents themselves.
 */
export interface RetrieveRequest {
  queries: string[];
  topk: number;
  returnScores: boolean;
}

export type RetrieveResponseItem = SearchDocument | { document: SearchDocument; score: number };

export interface RetrieveResponse {
  result: RetrieveResponseItem[][];
}

/** A request body field is invalid; the server answers 400 naming `field`. */
export class RetrieveRequestInvalid extends SearchEnvError {
  readonly field: string;

  constructor(field: string, message: string) {
    super('INVALID_ARGUMENT', `${field}: ${message}`);
    this.field = field;
  }
}

export interface RetrieveLimits {
  defaultTopk: number;
  maxTopk: number;
  maxQueries: number;
}

export function parseRetrieveRequest(body: unknown, limits: RetrieveLimits): RetrieveRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RetrieveRequestInvalid('body', 'must be a JSON object like {"queries": ["..."], "topk": 3, "return_scores": true}');
  }
  const record = body as Record<string, unknown>;
  if (record.queries !== undefined && record.query !== undefined) {
    throw new RetrieveRequestInvalid('queries', 'give either "queries" or "query", not both');
  }
  const field = record.queries !== undefined ? 'queries' : 'query';
  const raw = record[field];
  if (raw === undefined) throw new RetrieveRequestInvalid('queries', 'missing: give "queries" (a list of strings) or "query"');
  const list = Array.isArray(raw) ? raw : [raw];
  if (!Array.isArray(raw) && typeof raw !== 'string') {
    throw new RetrieveRequestInvalid(field, `must be a string or a list of strings, got ${JSON.stringify(raw)}`);
  }
  const queries: string[] = [];
  list.forEach((q, i) => {
    if (typeof q !== 'string') throw new RetrieveRequestInvalid(`${field}[${i}]`, `must be a string, got ${JSON.stringify(q)}`);
    queries.push(q);
  });
  if (queries.length > limits.maxQueries) {
    throw new RetrieveRequestInvalid(
      field,
      `${queries.length} queries exceed this server's limit of ${limits.maxQueries}; split the request`,
    );
  }
  const topk = record.topk ?? limits.defaultTopk;
  if (typeof topk !== 'number' || !Number.isInteger(topk) || topk < 1 || topk > limits.maxTopk) {
    throw new RetrieveRequestInvalid('topk', `must be an integer from 1 to ${limits.maxTopk}, got ${JSON.stringify(record.topk)}`);
  }
  const returnScores = record.return_scores ?? false;
  if (typeof returnScores !== 'boolean') {
    throw new RetrieveRequestInvalid('return_scores', `must be true or false, got ${JSON.stringify(record.return_scores)}`);
  }
  return { queries, topk, returnScores };
}

export function formatRetrieveResponse(hits: SearchHit[][], returnScores: boolean): RetrieveResponse {
  return {
    result: hits.map((list) =>
      list.map((hit) => {
        const document = { id: hit.document.id, contents: hit.document.contents };
        return returnScores ? { document, score: hit.score } : document;
      }),
    ),
  };
}

function readDocument(value: unknown): SearchDocument | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { id, contents } = value as Record<string, unknown>;
  if (typeof contents !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  return { id: String(id), contents };
}

/**
 * Reads a `/retrieve` response into hit lists; returns a description of the problem instead when the body does
 * not have the expected shape. Items without a score (a server ignoring `return_scores`) get score `NaN`.
 */
export function readRetrieveResponse(body: unknown, queryCount: number): SearchHit[][] | string {
  const result = (body as { result?: unknown } | null)?.result;
  if (!Array.isArray(result)) return 'no "result" list in the body';
  if (result.length !== queryCount) return `"result" has ${result.length} lists for ${queryCount} queries`;
  const out: SearchHit[][] = [];
  for (let q = 0; q < result.length; q++) {
    const list: unknown = result[q];
    if (!Array.isArray(list)) return `result[${q}] is not a list`;
    const hits: SearchHit[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = list[i] as Record<string, unknown> | null;
      const scored = item !== null && typeof item === 'object' && 'document' in item;
      const document = readDocument(scored ? item.document : item);
      if (!document) return `result[${q}][${i}] is not a document with "id" and "contents"`;
      const score = scored ? item.score : undefined;
      if (score !== undefined && typeof score !== 'number') return `result[${q}][${i}].score is not a number`;
      hits.push({ document, score: score ?? Number.NaN });
    }
    out.push(hits);
  }
  return out;
}
