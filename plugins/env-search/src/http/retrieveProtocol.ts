import { SearchEnvError } from '../errors.js';
import type { SearchDocument, SearchHit } from '../retrieval/Retriever.js';
import { echoJson } from '@drmas/core';

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

/** What a server accepts; error messages name the limit (`maxTopk`), as `drmas retriever` names its option (`--max-topk`). */
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
    throw new RetrieveRequestInvalid(field, `must be a string or a list of strings, got ${echoJson(raw)}`);
  }
  // counted before each query is looked at, so an oversized list costs no more than its length
  if (list.length > limits.maxQueries) {
    throw new RetrieveRequestInvalid(
      field,
      `${list.length} queries exceed this server's limit of ${limits.maxQueries} (maxQueries); split the request`,
    );
  }
  const queries: string[] = [];
  list.forEach((q, i) => {
    if (typeof q !== 'string') throw new RetrieveRequestInvalid(`${field}[${i}]`, `must be a string, got ${echoJson(q)}`);
    queries.push(q);
  });
  const topk = record.topk ?? limits.defaultTopk;
  if (typeof topk !== 'number' || !Number.isInteger(topk) || topk < 1 || topk > limits.maxTopk) {
    throw new RetrieveRequestInvalid('topk', `must be an integer from 1 to ${limits.maxTopk} (maxTopk), got ${echoJson(record.topk)}`);
  }
  const returnScores = record.return_scores ?? false;
  if (typeof returnScores !== 'boolean') {
    throw new RetrieveRequestInvalid('return_scores', `must be true or false, got ${echoJson(record.return_scores)}`);
  }
  return { queries, topk, returnScores };
}

function formatHits(list: SearchHit[], returnScores: boolean): RetrieveResponseItem[] {
  return list.map((hit) => {
    const document = { id: hit.document.id, contents: hit.document.contents };
    return returnScores ? { document, score: hit.score } : document;
  });
}

export function formatRetrieveResponse(hits: SearchHit[][], returnScores: boolean): RetrieveResponse {
  return { result: hits.map((list) => formatHits(list, returnScores)) };
}

/** The response to a request would be larger than the server's `maxResponseBytes`; the server answers 400 instead. */
export class RetrieveResponseTooLarge extends SearchEnvError {
  constructor(
    readonly maxBytes: number,
    /** How many queries' hits fitted before the limit. */
    readonly queriesThatFit: number,
    readonly queryCount: number,
  ) {
    super(
      'LIMIT_EXCEEDED',
      `the response would exceed this server's limit of ${maxBytes} bytes (maxResponseBytes): the hits of ${queriesThatFit} of ` +
        `${queryCount} queries fit; ask for a smaller topk or send fewer queries per request`,
    );
  }
}

/**
 * `JSON.stringify(formatRetrieveResponse(hits, returnScores))`, built one query at a time so that a response over
 * `maxBytes` (UTF-8) is refused as soon as it is known to be, without building it.
 */
export function serializeRetrieveResponse(hits: SearchHit[][], returnScores: boolean, maxBytes = Infinity): string {
  const head = '{"result":[';
  const tail = ']}';
  const parts = [head];
  let bytes = head.length + tail.length;
  for (let q = 0; q < hits.length; q++) {
    const part = `${q > 0 ? ',' : ''}${JSON.stringify(formatHits(hits[q]!, returnScores))}`;
    bytes += Buffer.byteLength(part);
    if (bytes > maxBytes) throw new RetrieveResponseTooLarge(maxBytes, q, hits.length);
    parts.push(part);
  }
  parts.push(tail);
  return parts.join('');
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
