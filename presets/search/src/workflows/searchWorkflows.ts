import { agent, type Plugin } from '@drmas/core';
import { fromTraceAllocator, Orchestra, PromptedAgent, RewardAllocator } from '@drmas/plugin-orchestra';
import { createMaskOrchestra, maskF1Allocator } from './mAsk.js';
import { createQdRagOrchestra } from './qdRag.js';
import { createSearchOrchestra } from './searchOrchestra.js';

// The roles of the search workflows (the Verifier is the orchestra plugin's).
export class SearcherAgent extends PromptedAgent {}
agent('searcher')(SearcherAgent);
export class AnswererAgent extends PromptedAgent {}
agent('answerer')(AnswererAgent);
export class PlannerAgent extends PromptedAgent {}
agent('planner')(PlannerAgent);
export class SummarizerAgent extends PromptedAgent {}
agent('summarizer')(SummarizerAgent);
export class UpdaterAgent extends PromptedAgent {}
agent('updater')(UpdaterAgent);
export class DecomposerAgent extends PromptedAgent {}
agent('decomposer')(DecomposerAgent);
export class EvidenceAgent extends PromptedAgent {}
agent('evidence')(EvidenceAgent);

/**
 * The search workflows: Dr. MAS's `search` orchestra, UnityMAS-O's `m-ask`, `qd-rag` and `qd-rag-evidence`, and the
 * `mask_f1` allocator.
 */
export const searchWorkflowsPlugin: Plugin = {
  name: 'search-workflows',
  register(ctx) {
    const roles = [SearcherAgent, AnswererAgent, PlannerAgent, SummarizerAgent, UpdaterAgent, DecomposerAgent, EvidenceAgent];
    for (const role of roles) ctx.agents.register(role);
    ctx.provide(Orchestra, 'search', createSearchOrchestra());
    ctx.provide(Orchestra, 'm-ask', createMaskOrchestra());
    ctx.provide(Orchestra, 'qd-rag', createQdRagOrchestra());
    ctx.provide(Orchestra, 'qd-rag-evidence', createQdRagOrchestra({ evidence: true }));
    ctx.provide(RewardAllocator, maskF1Allocator.name, fromTraceAllocator(maskF1Allocator));
  },
};
