import { defineTool, z, type SplitMix32, type Tool } from '@drmas/core';
import { generateKnowledgeBase, KB_SINGLE_HOP, type KnowledgeBase } from '../corpus/KnowledgeBase.js';
import type { SearchQuestion } from '../corpus/SearchQuestion.js';
import { Bm25Retriever } from '../retrieval/Bm25Retriever.js';
import { splitContents, type Retriever } from '../retrieval/Retriever.js';

/** What the search tool reads of env-search's settings: the knowledge base's seed and size, and passages per search. */
export interface SearchToolSettings {
  seed: number;
  entities: number;
  topk: number;
}

/**
 * The `search` Tool env-search contributes to tool-use environments (env-tools): BM25 over the synthetic knowledge
 * base of (`env.seed`, `env.entities`), the `env.topk` best passages one per line as `Title: text`. Its tasks are
 * `lookup`: the knowledge base's single-hop questions, each with its answer and the query that finds it.
 */
export function searchTool(settings: () => SearchToolSettings): Tool<{ query: string }> {
  let built: { seed: number; entities: number; base: KnowledgeBase; lookups: SearchQuestion[]; retriever?: Retriever } | undefined;
  const knowledgeBase = (seed: number) => {
    const { entities } = settings();
    if (built?.seed !== seed || built.entities !== entities) {
      const base = generateKnowledgeBase({ seed, entities });
      built = { seed, entities, base, lookups: base.questions.filter((q) => q.dataSource === KB_SINGLE_HOP) };
    }
    return built;
  };
  return defineTool({
    name: 'search',
    description: 'search the knowledge base',
    input: z.strictObject({ query: z.string().min(1).max(300).describe('what to look for') }),
    tasks: {
      kind: 'lookup',
      draw(random: SplitMix32, seed: number) {
        const question = random.pick(knowledgeBase(seed).lookups);
        const query = question.steps?.[0]?.query ?? question.question;
        return {
          key: `lookup/${question.question}`,
          task: {
            dataSource: 'tools-lookup',
            question: question.question,
            answer: question.answers[0]!,
            solution: { name: 'search', arguments: { query } },
          },
        };
      },
    },
    run: async ({ query }, { signal }) => {
      const kb = knowledgeBase(settings().seed);
      kb.retriever ??= new Bm25Retriever(kb.base.documents);
      const [hits = []] = await kb.retriever.search([query], settings().topk);
      signal.throwIfAborted();
      if (hits.length === 0) return 'no documents found';
      return hits
        .map((hit) => {
          const { title, text } = splitContents(hit.document.contents);
          return `${title}: ${text}`;
        })
        .join('\n');
    },
  });
}
