import { answerInText, scoreSearchAnswer, type SearchEnvEpisode } from '@drmas/plugin-env-search';
import type { OrchestraRow } from '@drmas/plugin-orchestra';

/** The env-search episode of a row (the search workflows run on env-search only). */
export function searchEpisode(row: OrchestraRow): SearchEnvEpisode {
  return row.episode as SearchEnvEpisode;
}

/**
 * The F1 of the answer in `agent`'s latest output of this step against the question's golden answers, read as the
 * environment reads a final answer (`answerInText`), so a temporary answer scores what it would score as the last;
 * 0 when the agent did not run.
 */
export function answerF1(row: OrchestraRow, agent: string): number {
  const output = row.outputs.get(agent);
  if (!output) return 0;
  return scoreSearchAnswer(answerInText(output.text), searchEpisode(row).task.answers).f1;
}
