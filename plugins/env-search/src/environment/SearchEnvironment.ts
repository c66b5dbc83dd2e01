import { DrmasError, type EnvAction, type EnvTaskBatch, type Environment, type Episode } from '@drmas/core';
import type { SearchQuestion } from '../corpus/SearchQuestion.js';
import { generateKnowledgeBase } from '../corpus/KnowledgeBase.js';
import { loadCorpusJsonl, loadQaFile } from '../corpus/jsonlLoaders.js';
import { SearchTaskSource } from '../corpus/SearchTaskSource.js';
import { DataFileError, SearchInputError } from '../errors.js';
import { RetrieverClient } from '../http/RetrieverClient.js';
import { Bm25Retriever } from '../retrieval/Bm25Retriever.js';
import type { Retriever, SearchDocument, SearchHit } from '../retrieval/Retriever.js';
import { applySearches, SearchEpisode } from '../SearchEpisode.js';
import { searchEnvSettings, type SearchEnvSettings, type SearchEnvSettingsInput } from './searchEnvConfig.js';

/** Arguments of RetrieverClient, which live under `env.retriever`. */
const RETRIEVER_OPTION = /^(urls|timeoutMs|maxRetries)\b/;

/** The retriever an episode searches with on its own (a workflow's retrieval tool), and documents per query. */
export interface EpisodeSearch {
  retriever: Retriever;
  topk: number;
}

/**
 * One question: searches append `<information>` to the observation; an answer ends it (exact match outcome). Besides
 * `search` actions (run by the environment's `advance`, batched over rows), a workflow's tool node can search mid-round
 * with `search(queries)`.
 */
export class SearchEnvEpisode implements Episode {
  roundScore?: number;
  private searches = 0;

  constructor(
    readonly inner: SearchEpisode,
    private readonly searcher?: EpisodeSearch,
  ) {}

  /** Whether a search still leaves the episode a round for its answer. */
  get canSearch(): boolean {
    return !this.inner.done && this.inner.rounds < this.inner.maxRounds - 1;
  }

  /**
   * Runs `queries` in one retriever call and records them as one search of the history (the queries joined with
   * `; `, the documents of all of them, each once, in order); returns the `<information>` block.
   */
  async search(queries: readonly string[]): Promise<string> {
    const [information] = await searchTogether([{ episode: this, queries }]);
    return information!;
  }

  /** Records one search's results (see `searchTogether`). */
  recordSearch(queries: readonly string[], hits: readonly SearchHit[][]): string {
    const seen = new Set<string>();
    const merged = hits.flat().filter((hit) => !seen.has(hit.document.id) && seen.add(hit.document.id));
    this.searches++;
    return this.inner.applySearch(queries.join('; '), merged);
  }

  /** The retriever this episode searches with (the environment's). */
  searchTool(): EpisodeSearch {
    if (!this.searcher) throw new Error(`episode of question ${this.task.id} was made without a retriever to search with`);
    return this.searcher;
  }

  get task(): SearchQuestion {
    return this.inner.question;
  }

  get done(): boolean {
    return this.inner.answer !== undefined;
  }

  get outcome(): number {
    return this.inner.reward();
  }

  observation(): string {
    return this.inner.observation();
  }

  variables(): Record<string, string> {
    return { question: this.inner.question.question };
  }

  metrics(): Record<string, number> {
    return { f1: this.inner.score().f1, searches: this.searches, answered: this.done ? 1 : 0 };
  }

  /** Applies an answer or an invalid action; returns the query of a search (run batched by the environment). */
  apply(action: EnvAction): string | undefined {
    this.roundScore = 0;
    if (action.type === 'search') {
      this.searches++;
      return action.content;
    }
    if (action.type === 'answer') {
      this.inner.applyAnswer(action.content);
      // The F1 gain of the answer: before it the episode had no answer, i.e. F1 0.
      this.roundScore = this.inner.score().f1;
    } else {
      this.inner.applyInvalid(action.content);
    }
    return undefined;
  }
}

/**
 * Question answering with a search engine (env-search): the synthetic knowledge base with in-process BM25 by
 * default; `env.questionsFile` (JSONL, JSON or Parquet) and `env.corpusFile` (JSONL) for Search-R1 data; `env.retriever.urls` for an HTTP
 * retriever. Each step runs every row's search in one retriever call.
 */
export class SearchEnvironment implements Environment<SearchQuestion> {
  readonly name = 'search';
  private readonly settingsOf: () => SearchEnvSettingsInput;
  private settings?: SearchEnvSettings;
  private source?: SearchTaskSource;
  private retriever?: Retriever;

  constructor(settings: SearchEnvSettingsInput | (() => SearchEnvSettingsInput) = {}) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  get maxRounds(): number {
    return this.settings?.maxRounds ?? 4;
  }

  async init(): Promise<void> {
    if (this.source) return;
    const s = searchEnvSettings.parse(this.settingsOf());
    if (s.questionsFile && !s.corpusFile && !s.retriever.urls) {
      throw new DrmasError('CONFIG_INVALID', 'search environment: env.questionsFile needs documents to search', {
        key: 'env.corpusFile',
        hint: 'set env.corpusFile (Search-R1 corpus JSONL) or env.retriever.urls (a retriever server)',
      });
    }
    try {
      const kb = s.questionsFile ? undefined : generateKnowledgeBase({ seed: s.seed, entities: s.entities });
      const questions = s.questionsFile ? await loadQaFile(s.questionsFile) : kb!.questions;
      this.retriever = s.retriever.urls
        ? new RetrieverClient({ urls: s.retriever.urls, timeoutMs: s.retriever.timeoutMs, maxRetries: s.retriever.maxRetries })
        : new Bm25Retriever(s.corpusFile ? await loadCorpusJsonl(s.corpusFile) : (kb!.documents as SearchDocument[]));
      this.source = new SearchTaskSource(questions, { seed: s.seed, testFraction: s.testFraction });
      this.settings = s;
    } catch (error) {
      if (error instanceof DataFileError)
        throw error.at(error.file === s.questionsFile ? 'env.questionsFile' : 'env.corpusFile', 'search environment');
      if (!(error instanceof SearchInputError)) throw error;
      const option = error.argument.replace(/^options\./, '');
      const key = `env.${RETRIEVER_OPTION.test(option) ? 'retriever.' : ''}${option}`;
      throw new DrmasError('CONFIG_INVALID', `search environment: ${error.message}`, { key, cause: error });
    }
  }

  batch(cursor: number, count: number): EnvTaskBatch<SearchQuestion> {
    return this.ready().batch(cursor, count);
  }

  test(): SearchQuestion[] {
    return this.ready().test();
  }

  reset(task: SearchQuestion): SearchEnvEpisode {
    return new SearchEnvEpisode(new SearchEpisode(task, { maxRounds: this.maxRounds }), {
      retriever: this.retriever!,
      topk: this.settings!.topk,
    });
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    const searches: { episode: SearchEpisode; query: string }[] = [];
    episodes.forEach((episode, i) => {
      const own = episode as SearchEnvEpisode;
      const query = own.apply(actions[i]!);
      if (query !== undefined) searches.push({ episode: own.inner, query });
    });
    try {
      await applySearches(this.retriever!, searches, this.settings!.topk);
    } catch (error) {
      if (DrmasError.is(error) && error.code === 'SERVICE_FAILED') throw error.at('env.retriever.urls', 'search environment');
      throw error;
    }
  }

  private ready(): SearchTaskSource {
    if (!this.source) throw new Error('SearchEnvironment used before init()');
    return this.source;
  }
}

/**
 * The searches of several episodes (each one or more queries) in one retriever call per retriever, as the
 * environment's `advance` batches its rows' searches: what a lock-step workflow's retrieval block runs. Returns each
 * request's `<information>` block.
 */
export async function searchTogether(
  requests: ReadonlyArray<{ episode: SearchEnvEpisode; queries: readonly string[] }>,
): Promise<string[]> {
  const information = new Array<string>(requests.length);
  const byTool = new Map<EpisodeSearch, number[]>();
  requests.forEach((request, i) => {
    const tool = request.episode.searchTool();
    byTool.set(tool, [...(byTool.get(tool) ?? []), i]);
  });
  for (const [tool, indices] of byTool) {
    const queries = indices.flatMap((i) => requests[i]!.queries);
    const hits = queries.length > 0 ? await tool.retriever.search(queries, tool.topk) : [];
    if (hits.length !== queries.length) throw new Error(`the retriever answered ${hits.length} hit lists for ${queries.length} queries`);
    let at = 0;
    for (const i of indices) {
      const { episode, queries: own } = requests[i]!;
      information[i] = episode.recordSearch(own, hits.slice(at, at + own.length));
      at += own.length;
    }
  }
  return information;
}
