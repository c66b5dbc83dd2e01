import { DrmasError, type Trajectory } from '@drmas/core';
import { traceOf, type EpisodeTrace, type NodeExecution } from '../trace/EpisodeTrace.js';
import type { AllocationContext, RewardAllocator } from './RewardAllocator.js';
import { allocateEach } from './RewardAllocators.js';

/** A reward allocator over one episode's trace: a reward for each turn an agent execution produced (by turn index). */
export interface TraceAllocator {
  readonly name: string;
  allocate(trace: EpisodeTrace, context: AllocationContext): Map<number, number>;
}

/** The trajectory's trace, which only the async executor records. */
function requireTrace(trajectory: Trajectory, allocator: string): EpisodeTrace {
  const trace = traceOf(trajectory);
  if (trace) return trace;
  throw new DrmasError(
    'CONFIG_INVALID',
    `reward.allocator "${allocator}" reads episode traces, and trajectory ${trajectory.trajectoryId} has none`,
    {
      key: 'reward.allocator',
      hint: 'set rollout.executor.kind: async (the executor records traces), or choose the allocator drmas or per_turn',
    },
  );
}

/**
 * A `RewardAllocator` (chosen by `reward.allocator`) from a trace allocator: each turn gets its execution's reward (0
 * when it has none), less the agent's invalid penalty as the other allocators give it.
 */
export function fromTraceAllocator(allocator: TraceAllocator): RewardAllocator {
  return {
    name: allocator.name,
    allocate: (batch, context) => {
      const rewards = new Map(batch.trajectories.map((t) => [t, allocator.allocate(requireTrace(t, allocator.name), context)]));
      return allocateEach(batch, context, (turn, _outcome, trajectory) => rewards.get(trajectory)?.get(turn.index) ?? 0);
    },
  };
}

const agentTurns = (trace: EpisodeTrace): NodeExecution[] => trace.executions.filter((e) => e.kind === 'agent' && e.turn !== undefined);

/** Every turn gets the episode's outcome (0 for a failed episode). */
export const traceOutcomeAllocator: TraceAllocator = {
  name: 'trace_outcome',
  allocate: (trace) => new Map(agentTurns(trace).map((e) => [e.turn!, trace.outcome])),
};

/** Each turn gets 1 for output in its agent's format, 0 otherwise (UnityMAS-O's local format reward). */
export const formatAllocator: TraceAllocator = {
  name: 'format',
  allocate: (trace) => new Map(agentTurns(trace).map((e) => [e.turn!, e.parsed?.valid ? 1 : 0])),
};

/**
 * Where a metric-delta allocator measures a turn's effect: `round`, at the end of the turn's round; `next`,
 * at the first execution after the turn that sets the metric (the next verification of a reflective loop). `step` is
 * `round`'s name before 0.2.0 (deprecated).
 */
export type DeltaSpan = 'round' | 'next' | 'step';

/**
 * Turn-level deltas of an episode metric (`f1`, `pass_rate`). With span `round` a turn of round s gets the
 * metric's value at the end of round s less its value before the turn (M-ASK: one search round per round). With span
 * `next` it gets the value the next measurement after the turn (a tool, function or environment execution that gives
 * the metric) gives less the last value measured before the turn
 * (UnityMAS-O's reflective code: the planner and coder of code turn t get p(t) - p(t-1), p(-1) = 0, and the reflector
 * after turn t gets p(t+1) - p(t), the change its reflection led to); a turn no measurement follows gets 0. The
 * agents in `reward.absoluteAgents` get the value itself instead of the change (M-ASK: planning and answer take
 * absolute F1). The value is the environment's metric after each round (`episode.metrics()`), or a state field of that
 * name set by a node; 0 before anything sets it. `segmentOf` cuts span `round` finer than rounds (M-ASK's
 * search rounds within one round): "the end of round s" is then the end of the turn's segment.
 */
export function metricDeltaAllocator(
  name: string,
  metric: string,
  span: DeltaSpan = 'round',
  segmentOf: (execution: NodeExecution) => string | number = (execution) => execution.step,
): TraceAllocator {
  return {
    name,
    allocate(trace, context) {
      const absolute = new Set(context.absoluteAgents ?? []);
      const rewards = new Map<number, number>();
      let value = 0;
      const before = new Map<NodeExecution, number>();
      const after = new Map<NodeExecution, number>();
      const endOfSegment = new Map<string | number, number>();
      let unmeasured: NodeExecution[] = [];
      for (const execution of trace.executions) {
        before.set(execution, value);
        const state = execution.stateAfter as Record<string, unknown> | undefined;
        const next = execution.metrics?.[metric] ?? state?.[metric];
        if (typeof next === 'number') {
          value = next;
          // Agent executions carry the state's field unchanged (its default included); they measure nothing.
          if (execution.kind !== 'agent') {
            for (const waiting of unmeasured) after.set(waiting, value);
            unmeasured = [];
          }
        }
        if (execution.kind === 'agent') unmeasured.push(execution);
        endOfSegment.set(segmentOf(execution), value);
      }
      for (const execution of agentTurns(trace)) {
        const end = span !== 'next' ? endOfSegment.get(segmentOf(execution))! : after.get(execution);
        if (end === undefined) rewards.set(execution.turn!, 0);
        else rewards.set(execution.turn!, absolute.has(execution.agent!) ? end : end - before.get(execution)!);
      }
      return rewards;
    },
  };
}

export const TRACE_ALLOCATORS: readonly TraceAllocator[] = [
  traceOutcomeAllocator,
  formatAllocator,
  metricDeltaAllocator('f1_delta', 'f1'),
  metricDeltaAllocator('pass_rate_delta', 'pass_rate'),
  metricDeltaAllocator('pass_rate_turn_delta', 'pass_rate', 'next'),
];
