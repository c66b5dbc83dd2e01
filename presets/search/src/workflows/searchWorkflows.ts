import { agent, type Plugin } from '@drmas/core';
import { fromTraceAllocator, Orchestra, PromptedAgent, RewardAllocator } from '@drmas/plugin-orchestra';
import { createMaskOrchestra, maskF1Allocator } from './mAsk.js';
import { createQdRagOrchestra } from './qdRag.js';

// The roles the search workflows add to the preset's Verifier, Searcher and Answerer.
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

/** The UnityMAS-O search workflows: orchestras `m-ask`, `qd-rag`, `qd-rag-evidence`, and the `mask_f1` allocator. */
export const searchWorkflowsPlugin: Plugin = {
  name: 'search-workflows',
  register(ctx) {
    for (const role of [PlannerAgent, SummarizerAgent, UpdaterAgent, DecomposerAgent, EvidenceAgent]) ctx.agents.register(role);
    ctx.provide(Orchestra, 'm-ask', createMaskOrchestra());
    ctx.provide(Orchestra, 'qd-rag', createQdRagOrchestra());
    ctx.provide(Orchestra, 'qd-rag-evidence', createQdRagOrchestra({ evidence: true }));
    ctx.provide(RewardAllocator, maskF1Allocator.name, fromTraceAllocator(maskF1Allocator));
  },
};
