import type { SearchQuestion } from './corpus/SearchQuestion.js';
import { SearchInputError } from './errors.js';
import type { SearchDocument } from './retrieval/Retriever.js';
import { SearchEpisode } from './SearchEpisode.js';

export type SearchAgentName = 'verifier' | 'search' | 'answer';

/** One agent turn of an ideal trajectory: the observation the agent sees and the text it should write. */
export interface DemonstrationTurn {
  agent: SearchAgentName;
  observation: string;
  target: string;
}

export interface SearchDemonstration {
  questionId: string;
  turns: DemonstrationTurn[];
  /** The episode after the ideal trajectory (answered, reward 1). */
  episode: SearchEpisode;
}

/**
 * Builds ideal trajectories for supervised warm-up from knowledge-base questions: per hop, the verifier says
 * `<verify>no</verify>` and the search agent queries the entity (`<think>need birthplace</think><search>Varnok
 * Telli born</search>`); the information shown is the supporting document; then the verifier says yes and the
 * answer agent writes `<answer>...</answer>`.
 */
export class DemonstrationBuilder {
  private readonly documents = new Map<string, SearchDocument>();

  constructor(knowledgeBase: { documents: readonly SearchDocument[] }) {
    for (const d of knowledgeBase.documents) this.documents.set(d.id, d);
  }

  build(question: SearchQuestion): SearchDemonstration {
    const steps = question.steps;
    if (!steps || steps.length === 0) {
      throw new SearchInputError(
        'question',
        `question ${question.id} has no solution steps; demonstrations need questions from generateKnowledgeBase`,
      );
    }
    const episode = new SearchEpisode(question, { maxRounds: steps.length + 1 });
    const turns: DemonstrationTurn[] = [];
    for (const step of steps) {
      const document = this.documents.get(step.docId);
      if (!document)
        throw new SearchInputError('question', `question ${question.id} cites ${step.docId}, which is not in the knowledge base`);
      turns.push({ agent: 'verifier', observation: episode.observation(), target: '<verify>no</verify>' });
      turns.push({
        agent: 'search',
        observation: episode.observation(),
        target: `<think>${step.need}</think><search>${step.query}</search>`,
      });
      episode.applySearch(step.query, [{ document, score: 1 }]);
    }
    turns.push({ agent: 'verifier', observation: episode.observation(), target: '<verify>yes</verify>' });
    const target = `<answer>${question.answers[0]}</answer>`;
    turns.push({ agent: 'answer', observation: episode.observation(), target });
    episode.applyAnswer(target);
    return { questionId: question.id, turns, episode };
  }
}
