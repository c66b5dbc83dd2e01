import { describe, expect, test } from '@jest/globals';
import type { RolloutBatch, Trajectory, Turn } from '@drmas/core';
import { fromTraceAllocator, REWARD_ALLOCATORS, type EpisodeTrace, type NodeExecution } from '../src/index.js';

// A search episode of three rounds, written out by hand:
//   step 0: verifier (turn 0, valid), searcher (turn 1, valid)    env: f1 0
//   step 1: verifier (turn 2, valid), answerer (turn 3, valid)    env: f1 0.5
//   step 2: verifier (turn 4, INVALID), answerer (turn 5, valid)  env: f1 0.8, outcome 1
const agentTurn = (step: number, agent: string, turn: number, valid = true): NodeExecution => ({
  node: agent,
  kind: 'agent',
  step,
  agent,
  turn,
  parsed: { valid },
  stateBefore: {},
  stateAfter: {},
  startedMs: 0,
  endedMs: 0,
});
const envStep = (step: number, f1: number): NodeExecution => ({
  node: 'env.step',
  kind: 'env',
  step,
  metrics: { f1 },
  stateBefore: {},
  stateAfter: {},
  startedMs: 0,
  endedMs: 0,
});
/** A verifier tool's execution in step 0, setting the state's `pass_rate`. */
const verifyTool = (passRate: number): NodeExecution => ({
  node: 'verify',
  kind: 'tool',
  step: 0,
  stateBefore: {},
  stateAfter: { pass_rate: passRate },
  startedMs: 0,
  endedMs: 0,
});
const searchTrace: EpisodeTrace = {
  trajectoryId: 't0',
  groupId: 'g0',
  taskId: 'task',
  status: 'completed',
  outcome: 1,
  durationMs: 0,
  executions: [
    agentTurn(0, 'verifier', 0),
    agentTurn(0, 'searcher', 1),
    envStep(0, 0),
    agentTurn(1, 'verifier', 2),
    agentTurn(1, 'answerer', 3),
    envStep(1, 0.5),
    agentTurn(2, 'verifier', 4, false),
    agentTurn(2, 'answerer', 5),
    envStep(2, 0.8),
  ],
};

function batchOf(trace: EpisodeTrace): RolloutBatch {
  // Turns as 0.1 built them (`step`, no `round`, no makeTurn): the trace allocators read the executions' rounds.
  const turns = trace.executions
    .filter((e) => e.kind === 'agent')
    .map((e) => ({ index: e.turn!, agentId: e.agent!, valid: e.parsed!.valid, step: e.step }) as Turn);
  const trajectory = {
    trajectoryId: trace.trajectoryId,
    groupId: trace.groupId,
    turns,
    outcome: trace.outcome,
    done: true,
    info: { trace },
  };
  return { trajectories: [trajectory as unknown as Trajectory], metrics: {} };
}

function rewards(name: string, trace: EpisodeTrace, absoluteAgents: string[] = []): number[] {
  const allocator = REWARD_ALLOCATORS.find((a) => a.name === name)!;
  const penalty = (agentId: string) => (agentId === 'verifier' || agentId === 'reflector' ? 0.01 : 0);
  return allocator.allocate(batchOf(trace), { invalidPenalty: penalty, absoluteAgents }).trajectories[0]!.turns.map((t) => t.reward!);
}

describe('reward allocators over a trace, against hand-worked rewards', () => {
  test('trace_outcome: the outcome on every turn, less the invalid verifier turn’s penalty', () => {
    expect(rewards('trace_outcome', searchTrace)).toEqual([1, 1, 1, 1, 0.99, 1]);
  });

  test('f1_delta: the F1 gain over the rest of each turn’s step; absolute F1 for the agents named', () => {
    // step 0: 0 - 0; step 1: 0.5 - 0; step 2: 0.8 - 0.5 = 0.3 (the invalid verifier: 0.3 - 0.01).
    const delta = rewards('f1_delta', searchTrace);
    [0, 0, 0.5, 0.5, 0.29, 0.3].forEach((expected, i) => expect(delta[i]).toBeCloseTo(expected, 12));
    const absolute = rewards('f1_delta', searchTrace, ['answerer']);
    [0, 0, 0.5, 0.5, 0.29, 0.8].forEach((expected, i) => expect(absolute[i]).toBeCloseTo(expected, 12));
  });

  test('pass_rate_delta: from a state field a verifier tool sets, within one round', () => {
    // coder (turn 0) -> verify tool: pass_rate 0.25 -> reflector (turn 1) -> coder (turn 2) -> verify tool: 0.75.
    const trace: EpisodeTrace = {
      ...searchTrace,
      outcome: 0,
      executions: [agentTurn(0, 'coder', 0), verifyTool(0.25), agentTurn(0, 'reflector', 1), agentTurn(0, 'coder', 2), verifyTool(0.75)],
    };
    // Each turn: the pass rate at the step's end (0.75) less the one before it (0, 0.25, 0.25).
    expect(rewards('pass_rate_delta', trace)).toEqual([0.75, 0.5, 0.5]);
  });

  test('pass_rate_turn_delta: the change across the next verification (UnityMAS-O reflective code)', () => {
    // Three code turns, hand-worked: planner, coder, verify (p0 0.25), reflector, planner, coder, verify (p1 0.75),
    // reflector, planner, coder, verify (p2 0.5); the second reflector's output is invalid (penalty 0.01 below).
    // Every execution carries the state, so agent turns show the pass rate of the verification before them.
    let carried = 0;
    const withState = (e: NodeExecution): NodeExecution => {
      if (e.kind === 'agent') return { ...e, stateBefore: { pass_rate: carried }, stateAfter: { pass_rate: carried } };
      carried = (e.stateAfter as { pass_rate: number }).pass_rate;
      return e;
    };
    const trace: EpisodeTrace = {
      ...searchTrace,
      outcome: 0.5,
      executions: [
        agentTurn(0, 'planner', 0),
        agentTurn(0, 'coder', 1),
        verifyTool(0.25),
        agentTurn(0, 'reflector', 2),
        agentTurn(0, 'planner', 3),
        agentTurn(0, 'coder', 4),
        verifyTool(0.75),
        agentTurn(0, 'reflector', 5, false),
        agentTurn(0, 'planner', 6),
        agentTurn(0, 'coder', 7),
        verifyTool(0.5),
      ].map(withState),
    };
    // Turn 0: p0 - 0 = 0.25; reflector 0 and turn 1: p1 - p0 = 0.5; reflector 1 and turn 2: p2 - p1 = -0.25 (- 0.01).
    const delta = rewards('pass_rate_turn_delta', trace);
    [0.25, 0.25, 0.5, 0.5, 0.5, -0.26, -0.25, -0.25].forEach((expected, i) => expect(delta[i]).toBeCloseTo(expected, 12));
    // Absolute for the planner: the pass rate of the verification after each plan (0.25, 0.75, 0.5).
    const absolute = rewards('pass_rate_turn_delta', trace, ['planner']);
    [0.25, 0.25, 0.5, 0.75, 0.5, -0.26, 0.5, -0.25].forEach((expected, i) => expect(absolute[i]).toBeCloseTo(expected, 12));
    // pass_rate_delta instead gives each turn the change up to the step's end (p2 = 0.5) from before the turn.
    const toEnd = rewards('pass_rate_delta', trace);
    [0.5, 0.5, 0.25, 0.25, 0.25, -0.26, -0.25, -0.25].forEach((expected, i) => expect(toEnd[i]).toBeCloseTo(expected, 12));
    // A turn no verification follows (the episode failed before it) gets 0.
    const cut: EpisodeTrace = { ...trace, executions: trace.executions.slice(0, 5) };
    expect(rewards('pass_rate_turn_delta', cut)).toEqual([0.25, 0.25, 0, 0]);
  });

  test('format: 1 for valid output, 0 for invalid (which also carries its penalty)', () => {
    expect(rewards('format', searchTrace)).toEqual([1, 1, 1, 1, -0.01, 1]);
  });

  test('a trajectory without a trace is refused, naming the key to change', () => {
    const batch = batchOf(searchTrace);
    batch.trajectories[0]!.info = {};
    const allocator = fromTraceAllocator({ name: 'mine', allocate: () => new Map() });
    expect(() => allocator.allocate(batch, { invalidPenalty: () => 0 })).toThrow(
      'reward.allocator "mine" reads episode traces, and trajectory t0 has none',
    );
  });
});
