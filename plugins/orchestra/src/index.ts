export type { Agent, AgentSampling, PromptVariables } from './agents/Agent.js';
export { renderPrompt } from './agents/promptTemplate.js';
export {
  agentEntrySchema,
  mergeAgentOptions,
  promptedAgentOptionsSchema,
  samplingSchema,
  type AgentEntry,
  type PromptedAgentOptions,
} from './agents/agentConfig.js';
export { PromptedAgent } from './agents/PromptedAgent.js';
export { ObserverAgent, PioneerAgent, ROLE_AGENTS, SolverAgent, VerifierAgent } from './agents/RoleAgents.js';

export type { AgentOutput, Block, BlockContext, BlockSpec, LoopState, OrchestraRow, RowPredicate, Setting } from './blocks/Block.js';
export { call } from './blocks/call.js';
export { sequential } from './blocks/sequential.js';
export { when } from './blocks/when.js';
export { loopUntil, type LoopOptions } from './blocks/loopUntil.js';
export { route, routeKey, type RouteOptions } from './blocks/route.js';
export { isLastRound, isLastStep, notLastLoop, verdictIs } from './blocks/predicates.js';

export { Orchestra, actionFrom, blocksOf, defineOrchestra, NO_ACTION } from './orchestras/Orchestra.js';

export {
  END,
  START,
  type AgentNode,
  type FunctionNode,
  type GraphContext,
  type GraphEdge,
  type GraphNode,
  type GraphSetting,
  type ToolNode,
  type WorkflowGraph,
} from './graph/WorkflowGraph.js';
export { GraphBuilder, workflowGraph, type EdgeOptions } from './graph/GraphBuilder.js';
export { validateGraph, type GraphCheckOptions } from './graph/validateGraph.js';
export { blockGraph } from './graph/blockGraph.js';
export {
  GraphExecutor,
  EpisodeFailure,
  graphOf,
  type ExecutorRunStats,
  type GraphEpisodeRun,
  type GraphExecutorOptions,
} from './executor/GraphExecutor.js';
export {
  ModelRequestQueue,
  type QueueOptions,
  type QueueStats,
  type QueuedSample,
  type SampleRequest,
  type SharedSampling,
} from './executor/ModelRequestQueue.js';
export { executorMetrics } from './executor/executorMetrics.js';
export { traceOf, type EpisodeTrace, type FailureReason, type NodeExecution } from './trace/EpisodeTrace.js';
export { appendTraces, TRACES_FILE } from './trace/traceFile.js';
export { createMathOrchestra, DEFAULT_MAX_LOOPS } from './orchestras/MathOrchestra.js';
export { createCoryOrchestra, CORY_OBSERVER_PROMPT, CORY_PIONEER_PROMPT } from './orchestras/CoryOrchestra.js';
export { majorityAnswer, type VoteResult } from './orchestras/majorityAnswer.js';
export { createMajorityVoteOrchestra, createSummaryOrchestra, DEFAULT_SOLVERS } from './orchestras/VoteOrchestras.js';
export {
  createDebateOrchestra,
  debateAnswer,
  debateTranscript,
  DEFAULT_DEBATERS,
  DEFAULT_ROUNDS,
  JUDGE_ROLE,
  type DebateOptions,
} from './orchestras/DebateOrchestra.js';
export { DEBATE_JUDGE_PROMPT, DEBATER_PROMPT, SUMMARIZER_PROMPT, VOTE_SOLVER_PROMPT } from './orchestras/maverlPrompts.js';
export { MATH_SOLVER_PROMPT, MATH_VERIFIER_PROMPT } from './orchestras/mathPrompts.js';

export {
  EpisodeRunner,
  OrchestraRunner,
  type AgentEngine,
  type EpisodeRun,
  type OrchestraRunnerOptions,
  type RunEpisodesRequest,
} from './rollout/OrchestraRunner.js';
export { agentTurnStats, rolloutMetrics, type AgentTurnStats } from './rollout/rolloutMetrics.js';
export {
  evaluateEpisodes,
  EVAL_SAMPLING,
  type EvaluateOptions,
  type EvaluationResult,
  type TaskOutcomes,
} from './rollout/evaluateEpisodes.js';

export { RewardAllocator, type AllocationContext } from './reward/RewardAllocator.js';
export { allocateEach, drmasAllocator, perTurnAllocator } from './reward/RewardAllocators.js';
export { RewardAllocationPlugin, REWARD_ALLOCATORS } from './reward/RewardAllocationPlugin.js';
export {
  formatAllocator,
  fromTraceAllocator,
  metricDeltaAllocator,
  type DeltaSpan,
  TRACE_ALLOCATORS,
  traceOutcomeAllocator,
  type TraceAllocator,
} from './reward/traceAllocators.js';

export {
  ORCHESTRA_LIMITS,
  orchestraSection,
  rewardSection,
  rolloutSection,
  executorSection,
  type ExecutorSettings,
  type OrchestraSettings,
  type RewardSettings,
  type RolloutSettings,
} from './plugin/orchestraConfig.js';
export {
  agentLimits,
  checkAgentRoles,
  checkRunnerRoles,
  checkEvalTasks,
  checkMemory,
  checkPositions,
  estimateEpisodeMemory,
  STEP_RECORD_BYTES_PER_TOKEN,
  turnsPerEpisode,
  type MemoryEstimate,
} from './plugin/rolloutLimits.js';
export { OrchestraPlugin, type OrchestraState } from './plugin/OrchestraPlugin.js';
export { Workflow } from './plugin/Workflow.js';
export { default } from './plugin/OrchestraPlugin.js';
export { EvaluationTaps, evalSection, type EvalSettings } from './evaluation/EvaluationTaps.js';
export { TeacherBackend, teacherBackendFactory, type TeacherPolicy } from './demonstrations/TeacherBackend.js';
export {
  collectDemonstrations,
  demonstrationLines,
  supervisedWarmup,
  warmupPresetBase,
  writeDemonstrations,
  type BaseBuildOptions,
  type CollectOptions,
  type DemonstrationLine,
  type WarmupOptions,
} from './demonstrations/collectDemonstrations.js';
export { GreedyBaselineSource, observationSource } from './rollout/batchInputs.js';
export { StepRollouts, type StepRolloutRequest } from './plugin/StepRollouts.js';
export { checkRolloutWorkers, sampleStreamsOf } from './plugin/rolloutWorkers.js';
export { collect as collectCommand } from './cli/collectCommand.js';
