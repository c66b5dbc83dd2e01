import { answerInText, scoreSearchAnswer, type SearchAnswerScore } from './answerMatch.js';
import type { SearchQuestion } from './corpus/SearchQuestion.js';
import { SearchEnvError, SearchInputError } from './errors.js';
import type { Retriever, SearchHit } from './retrieval/Retriever.js';

export type SearchHistoryEntry =
  | { kind: 'search'; query: string; information: string }
  | { kind: 'answer'; text: string; answer: string }
  | { kind: 'invalid'; text: string; feedback: string };

export type SearchAction = { type: 'search'; query: string } | { type: 'answer'; answer: string } | { type: 'invalid' };

export interface SearchEpisodeOptions {
  /** Rounds (searches, answers and invalid actions) allowed before the episode ends unanswered; default 4. */
  maxRounds?: number;
  /** @deprecated since 0.2.0: `maxRounds`. */
  maxSteps?: number;
}

/** Search-R1's reply to an output with neither a search nor an answer. */
export const INVALID_ACTION_FEEDBACK =
  'My previous action is invalid. If I want to search, I should put the query between <search> and </search>. ' +
  'If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.';

/**
 * Formats hits as Search-R1 does: `Doc i(Title: <first line of contents>) <rest>` one per line, inside
 * `<information>...</information>`.
 */
export function formatInformation(hits: readonly SearchHit[]): string {
  const lines = hits.map((hit, i) => {
    const contents = hit.document.contents;
    const newline = contents.indexOf('\n');
    const title = newline < 0 ? contents : contents.slice(0, newline);
    const text = newline < 0 ? '' : contents.slice(newline + 1);
    return `Doc ${i + 1}(Title: ${title}) ${text}`;
  });
  return `<information>${lines.join('\n').trim() || 'No documents found.'}</information>`;
}

const ACTION_OPEN = /<(search|answer)>/g;

/**
 * The first `<search>` or `<answer>` element of an agent output, as Search-R1's rollout loop reads it: the first
 * opening tag with a closing tag of the same name after it, up to the first such close. Time linear in the length
 * of `text`: whether a close follows is read from the last close of each name (a lazy regex searched the rest of
 * the text again from every opening tag, quadratic time on an output of many unclosed tags).
 */
export function parseSearchAction(text: string): SearchAction {
  const lastClose = { search: text.lastIndexOf('</search>'), answer: text.lastIndexOf('</answer>') };
  for (const open of text.matchAll(ACTION_OPEN)) {
    const name = open[1] as 'search' | 'answer';
    const start = open.index + open[0].length;
    if (lastClose[name] < start) continue;
    const content = text.slice(start, text.indexOf(`</${name}>`, start)).trim();
    return name === 'search' ? { type: 'search', query: content } : { type: 'answer', answer: content };
  }
  return { type: 'invalid' };
}

/** `true` for `<verify>yes</verify>`, `false` for `<verify>no</verify>`, `undefined` when the verifier said neither. */
export function parseVerifierDecision(text: string): boolean | undefined {
  const match = /<verify>\s*(yes|no)\s*<\/verify>/i.exec(text);
  return match ? match[1]!.toLowerCase() === 'yes' : undefined;
}

/**
 * The state of one question's episode: the searches made and the information they returned, the round count and
 * the final answer. Reward is the normalised exact match of the answer with any golden answer.
 */
export class SearchEpisode {
  readonly question: SearchQuestion;
  readonly maxRounds: number;
  private readonly entries: SearchHistoryEntry[] = [];
  private finalAnswer: string | undefined;
  private finished = false;

  constructor(question: SearchQuestion, options: SearchEpisodeOptions = {}) {
    if (options.maxRounds !== undefined && options.maxSteps !== undefined)
      throw new SearchInputError('options.maxSteps', 'is the old name of options.maxRounds, which is set too: remove it');
    const { maxRounds = options.maxSteps ?? 4 } = options;
    const key = options.maxRounds === undefined && options.maxSteps !== undefined ? 'options.maxSteps' : 'options.maxRounds';
    if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new SearchInputError(key, `must be an integer >= 1, got ${maxRounds}`);
    this.question = question;
    this.maxRounds = maxRounds;
  }

  get rounds(): number {
    return this.entries.length;
  }

  get done(): boolean {
    return this.finished;
  }

  /** The answer given, or `undefined` while none was. */
  get answer(): string | undefined {
    return this.finalAnswer;
  }

  get history(): readonly SearchHistoryEntry[] {
    return this.entries;
  }

  /** Records a search and the hits it returned; returns the `<information>` block appended to the history. */
  applySearch(query: string, hits: readonly SearchHit[]): string {
    this.assertOpen('applySearch');
    const information = formatInformation(hits);
    this.record({ kind: 'search', query, information });
    return information;
  }

  /** Ends the episode with an answer: the text of the last `<answer>` in `text`, or all of `text` if it has none. */
  applyAnswer(text: string): void {
    this.assertOpen('applyAnswer');
    const answer = answerInText(text);
    this.finalAnswer = answer;
    this.record({ kind: 'answer', text, answer });
    this.finished = true;
  }

  /** Records an output that was neither a search nor an answer; it uses up a round. Returns Search-R1's feedback. */
  applyInvalid(text: string): string {
    this.assertOpen('applyInvalid');
    this.record({ kind: 'invalid', text, feedback: INVALID_ACTION_FEEDBACK });
    return INVALID_ACTION_FEEDBACK;
  }

  /** The question and the history so far, as shown in agents' prompts. */
  observation(): string {
    const parts = [`Question: ${this.question.question}`];
    for (const entry of this.entries) {
      if (entry.kind === 'search') parts.push(`<search>${entry.query}</search>`, entry.information);
      else if (entry.kind === 'answer') parts.push(`<answer>${entry.answer}</answer>`);
      else parts.push(entry.feedback);
    }
    return parts.join('\n');
  }

  score(): SearchAnswerScore {
    return scoreSearchAnswer(this.finalAnswer, this.question.answers);
  }

  /** Normalised exact match of the answer (0 when none was given). */
  reward(): number {
    return this.score().exactMatch;
  }

  private record(entry: SearchHistoryEntry): void {
    this.entries.push(entry);
    if (this.entries.length >= this.maxRounds) this.finished = true;
  }

  private assertOpen(action: string): void {
    if (this.finished) {
      throw new SearchEnvError(
        'INVALID_ARGUMENT',
        `${action}: the episode of question ${this.question.id} is finished (${this.rounds} round${this.rounds === 1 ? '' : 's'}${this.finalAnswer === undefined ? '' : ', answered'}); check episode.done before acting`,
      );
    }
  }
}

/**
 * Runs the searches of many episodes with one retriever call (one HTTP request when the retriever is a
 * `RetrieverClient`) and appends each result; returns the `<information>` blocks in request order.
 */
export async function applySearches(
  retriever: Retriever,
  requests: ReadonlyArray<{ episode: SearchEpisode; query: string }>,
  topk: number,
): Promise<string[]> {
  if (requests.length === 0) return [];
  const hits = await retriever.search(
    requests.map((r) => r.query),
    topk,
  );
  if (hits.length !== requests.length) throw new Error(`the retriever answered ${hits.length} hit lists for ${requests.length} queries`);
  return requests.map((r, i) => r.episode.applySearch(r.query, hits[i]!));
}
