import { z } from '@drmas/core';
import { splitContents, type Retriever } from '@drmas/plugin-env-search';
import { defineTool, type ToolDefinition } from '../registry/ToolDefinition.js';

/**
 * The search tool over env-search's retriever (the synthetic knowledge base's BM25 index in process, or a Search-R1
 * retriever server): the `topk` best passages, one per line as `Title: text`.
 */
export function searchTool(retriever: () => Retriever, topk: () => number): ToolDefinition<{ query: string }> {
  return defineTool({
    name: 'search',
    description: 'search the knowledge base',
    input: z.strictObject({ query: z.string().min(1).max(300).describe('what to look for') }),
    run: async ({ query }, { signal }) => {
      const [hits = []] = await retriever().search([query], topk());
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
