import { actionFrom, defineOrchestra, END, NO_ACTION, workflowGraph, type Orchestra, type OrchestraRow } from '@drmas/plugin-orchestra';
import { searchEpisode } from './searchSteps.js';

export const QD_DECOMPOSER_PROMPT = 'Decompose: {question}\n';
export const QD_EVIDENCE_PROMPT = 'Evidence: {observation}\n';

/** Sub-queries retrieved at most per question (one retriever call for all of them). */
export const MAX_SUB_QUERIES = 4;

/**
 * The Decomposer's sub-queries: its `<queries>` content split on `;` or new lines, at most `MAX_SUB_QUERIES`; the
 * question itself when it wrote none (an invalid output), so the Answerer still reads documents.
 */
export function subQueries(row: OrchestraRow): string[] {
  const output = row.outputs.get('decomposer');
  const parts = output?.valid
    ? (output.action?.content ?? '')
        .split(/[;\n]/)
        .map((part) => part.trim())
        .filter((part) => part !== '')
    : [];
  return parts.length > 0 ? parts.slice(0, MAX_SUB_QUERIES) : [searchEpisode(row).task.question];
}

/**
 * Query-decomposition RAG as a graph (async executor only): the Decomposer splits the question into sub-queries, a
 * tool node retrieves them all in one retriever call (recorded as one search), the Evidence agent (with `evidence`)
 * picks what answers the question, and the Answerer answers; one round, whose action is the answer.
 */
export function createQdRagOrchestra(options: { evidence?: boolean } = {}): Orchestra {
  const decomposed = workflowGraph()
    .agent('decompose', 'decomposer')
    .tool('retrieve', 'retriever', (ctx) => searchEpisode(ctx.row).search(subQueries(ctx.row)))
    .agent('answer', 'answerer')
    .start('decompose')
    .edge('decompose', 'retrieve')
    .edge('answer', END);
  const graph = options.evidence
    ? decomposed.agent('evidence', 'evidence').edge('retrieve', 'evidence').edge('evidence', 'answer').build()
    : decomposed.edge('retrieve', 'answer').build();
  return defineOrchestra({
    name: options.evidence ? 'qd-rag-evidence' : 'qd-rag',
    agents: {
      decomposer: {
        prompt: QD_DECOMPOSER_PROMPT,
        tag: 'queries',
        stop: ['</queries>'],
        invalidPenalty: 0.01,
        sampling: { maxNewTokens: 32 },
      },
      ...(options.evidence
        ? {
            evidence: {
              prompt: QD_EVIDENCE_PROMPT,
              tag: 'evidence',
              stop: ['</evidence>'],
              invalidPenalty: 0.01,
              sampling: { maxNewTokens: 32 },
            },
          }
        : {}),
      answerer: { prompt: 'Answer: {observation}', tag: 'answer', stop: ['</answer>'], invalidPenalty: 0.01 },
    },
    graph,
    action: (row) => actionFrom(row, 'answerer', 'answer', 'text') ?? NO_ACTION,
  });
}
