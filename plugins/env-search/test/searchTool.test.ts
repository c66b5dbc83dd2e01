import { describe, expect, test } from '@jest/globals';
import { hashParts, SplitMix32, type ToolContext } from '@drmas/core';
import { generateKnowledgeBase, KB_SINGLE_HOP, searchTool } from '../src/index.js';

const context: ToolContext = {
  signal: new AbortController().signal,
  timeoutMs: 5000,
  episodeState: (_key, create) => create(),
  taskFiles: {},
};

describe('the search tool env-search contributes', () => {
  const tool = searchTool(() => ({ seed: 3, entities: 120, topk: 1 }));

  test("its lookup tasks are the knowledge base's single-hop questions, each with its answer and the call that solves it", () => {
    const singleHop = generateKnowledgeBase({ seed: 3, entities: 120 }).questions.filter((q) => q.dataSource === KB_SINGLE_HOP);
    expect(tool.tasks?.kind).toBe('lookup');
    for (let i = 0; i < 50; i++) {
      const { key, task } = tool.tasks!.draw(new SplitMix32(hashParts('lookups', i)), 3);
      const question = singleHop.find((q) => q.question === task.question)!;
      expect(key).toBe(`lookup/${question.question}`);
      expect(task).toEqual({
        dataSource: 'tools-lookup',
        question: question.question,
        answer: question.answers[0],
        solution: { name: 'search', arguments: { query: question.steps?.[0]?.query ?? question.question } },
      });
    }
  });

  test("a lookup's call finds a passage holding its answer, written `Title: text`", async () => {
    for (let i = 0; i < 20; i++) {
      const { task } = tool.tasks!.draw(new SplitMix32(hashParts('lookups', i)), 3);
      const found = await tool.run(task.solution!.arguments as { query: string }, context);
      expect(found.split('\n')).toHaveLength(1);
      expect(found).toMatch(/^[^:]+: /);
      expect(found).toContain(task.answer);
    }
  });

  test('topk passages, one a line', async () => {
    const three = searchTool(() => ({ seed: 3, entities: 120, topk: 3 }));
    const { task } = three.tasks!.draw(new SplitMix32(7), 3);
    expect((await three.run(task.solution!.arguments as { query: string }, context)).split('\n')).toHaveLength(3);
  });
});
