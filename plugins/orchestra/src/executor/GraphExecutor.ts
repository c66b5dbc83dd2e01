import { setMaxListeners } from 'node:events';
import { DrmasError, SeededRng, type Environment } from '@drmas/core';
import type { Agent } from '../agents/Agent.js';
import type { OrchestraRow } from '../blocks/Block.js';
import { blockGraph } from '../graph/blockGraph.js';
import {
  counterOf,
  END,
  START,
  settingValue,
  type GraphContext,
  type GraphEdge,
  type GraphNode,
  type WorkflowGraph,
} from '../graph/WorkflowGraph.js';
import { blocksOf, type Orchestra } from '../orchestras/Orchestra.js';
import { agentPrompt, checkPromptRoom, recordAgentTurn, type AgentEngine } from '../rollout/agentTurns.js';
import { createRows, finishTrajectory, generateSettings, recordTurnScores } from '../rollout/episodeRows.js';
import type { EpisodeRun, EpisodeRunner, OrchestraRunnerOptions, RunEpisodesRequest } from '../rollout/OrchestraRunner.js';
import type { EpisodeTrace, FailureReason, NodeExecution } from '../trace/EpisodeTrace.js';
import { ModelRequestQueue, type QueueStats } from './ModelRequestQueue.js';
import { abortReason } from './abortReason.js';
import type { ExecutorSettings } from '../plugin/orchestraConfig.js';

/** An episode's end before its graph finished: recorded on its trajectory and trace, never thrown out of `run`. */
export class EpisodeFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
    readonly node?: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

export interface GraphExecutorOptions extends OrchestraRunnerOptions {
  /** `rollout.executor` less its `kind`. */
  executor: Omit<ExecutorSettings, 'kind'>;
  /** The graph to run (default: the orchestra's `graph`, else its blocks' graph). */
  graph?: WorkflowGraph;
}

/** What the executor measured in one run, per model: generate calls, rows, and queue waits. */
export interface ExecutorRunStats {
  models: Record<string, QueueStats>;
  failed: Partial<Record<FailureReason, number>>;
}

/** The executor's run: every episode's trace and the queues' figures are always there. */
export type GraphEpisodeRun = EpisodeRun & Required<Pick<EpisodeRun, 'traces' | 'executor'>>;

/** A promise that rejects with the signal's reason once it aborts (the work itself is not stopped). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A signal that follows `parent` and also aborts with `reason` after `ms` (none when 0); `dispose` clears the timer. */
function scopedSignal(
  parent: AbortSignal | undefined,
  ms: number,
  reason: () => EpisodeFailure,
): { signal: AbortSignal; abort: (why: EpisodeFailure) => void; dispose: () => void } {
  const controller = new AbortController();
  // Every episode (and each of its calls) listens to the batch's signal: more than EventTarget's default of 10.
  setMaxListeners(0, controller.signal);
  const onParent = () => controller.abort(parent!.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParent, { once: true });
  const timer = ms > 0 ? setTimeout(() => controller.abort(reason()), ms) : undefined;
  return {
    signal: controller.signal,
    abort: (why) => controller.abort(why),
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}

/**
 * Runs each episode as its own async task through the orchestra's graph: agent calls go to per-model request
 * queues that micro-batch them onto the model's rollout engine (`maxBatchSize`, `maxWaitMs`, `modelConcurrency`), at
 * most `maxInflightEpisodes` episodes run at once, and LLM calls, tool calls (and rounds), episodes and
 * the batch have timeouts. An episode that times out, whose tool fails, or whose agent request fails (its prompt does
 * not fit the model, or the engine throws for it: a failed micro-batch is re-run row by row, so only the rows that
 * fail alone fail) is kept, with its reason and partial trace (`trajectory.info.failure`, `trajectory.info.trace`);
 * `failedEpisodes: skip` leaves its turns out of training. A step where every episode's request failed throws the
 * first error: that is the setup's fault, not an episode's.
 *
 * Sampling: each agent call's seed derives from (rollout seed, round, agent, the episode's call index
 * for that agent in the round) and each row's stream is keyed by its row index, as the lock-step runner does with
 * `rollout.sampleStreams: row`; for workflows where every row reaching a call site has made the same number of
 * calls to that agent before (the math and search orchestras), the two sample the same tokens.
 */
export class GraphExecutor implements EpisodeRunner {
  readonly environment: Environment;
  readonly orchestra: Orchestra;
  readonly graph: WorkflowGraph;
  private readonly agents: ReadonlyMap<string, Agent>;
  private readonly engineFor: (agentId: string) => AgentEngine;
  private readonly settings: Readonly<Record<string, unknown>>;
  private readonly options: Omit<ExecutorSettings, 'kind'>;
  private readonly limitedInto = new Map<string, string[]>();

  constructor(options: GraphExecutorOptions) {
    this.environment = options.environment;
    this.orchestra = options.orchestra;
    this.agents = options.agents;
    this.engineFor = options.engineFor;
    this.settings = options.settings ?? {};
    this.options = options.executor;
    this.graph = options.graph ?? graphOf(options.orchestra);
    for (const edge of this.graph.edges) {
      if (edge.limit !== undefined) this.limitedInto.set(edge.to, [...(this.limitedInto.get(edge.to) ?? []), counterOf(edge)]);
    }
  }

  async run(request: RunEpisodesRequest): Promise<GraphEpisodeRun> {
    if (request.sampleStreams === 'position') {
      throw new DrmasError(
        'INVALID_ARGUMENT',
        'the async executor samples each row from its own stream; sampleStreams "position" needs the lock-step runner',
        {
          key: 'rollout.sampleStreams',
          hint: 'leave sampleStreams out (or "row"), or run the episodes with OrchestraRunner',
        },
      );
    }
    const rows = createRows(this.environment, request);
    const seeds = new SeededRng(request.seed);
    const queues = new Map<string, ModelRequestQueue>();
    const queueOf = (engine: AgentEngine): ModelRequestQueue => {
      let queue = queues.get(engine.workerGroupId);
      if (!queue) {
        const { maxBatchSize, maxWaitMs, modelConcurrency } = this.options;
        queue = new ModelRequestQueue(engine.backend, { maxBatchSize, maxWaitMs, concurrency: modelConcurrency });
        queues.set(engine.workerGroupId, queue);
      }
      return queue;
    };
    const generateCalls: Record<string, number> = {};
    const llmErrors: unknown[] = [];
    const traces: EpisodeTrace[] = new Array<EpisodeTrace>(rows.length);
    const batch = scopedSignal(
      undefined,
      this.options.timeouts.batchMs,
      () => new EpisodeFailure('batch_timeout', `the batch ran past ${this.options.timeouts.batchMs} ms`),
    );
    let fatal: Error | undefined;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < rows.length) {
        const i = next++;
        const row = rows[i]!;
        try {
          traces[i] = await this.episode(row, request, { seeds, queueOf, batchSignal: batch.signal, generateCalls, llmErrors });
        } catch (error) {
          // Not an episode's failure (a graph calling an undeclared agent, a node's own exception): the run stops.
          fatal ??= error instanceof Error ? error : new Error(String(error));
          batch.abort(new EpisodeFailure('cancelled', "the run stopped on another episode's error"));
          traces[i] = this.failedTrace(row, new EpisodeFailure('cancelled', 'the run stopped on another error'), [], 0);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.options.maxInflightEpisodes, rows.length) }, lane));
    } finally {
      batch.dispose();
    }
    if (fatal !== undefined) throw fatal;
    // Every episode's request failed: not one episode's trouble but the setup's (a prompt template too long for the
    // model, a broken engine), which training on nothing would hide.
    if (llmErrors.length > 0 && traces.every((trace) => trace.failure?.reason === 'llm_failed')) throw llmErrors[0];
    const failed: ExecutorRunStats['failed'] = {};
    for (const trace of traces) if (trace.failure) failed[trace.failure.reason] = (failed[trace.failure.reason] ?? 0) + 1;
    const models: Record<string, QueueStats> = {};
    for (const [id, queue] of queues) models[id] = queue.stats();
    return {
      trajectories: rows.map((row) => row.trajectory),
      episodes: rows.map((row) => row.episode),
      generateCalls,
      traces,
      executor: { models, failed },
    };
  }

  /** One episode through the graph, round by round; its trace (failed or not). */
  private async episode(
    row: OrchestraRow,
    request: RunEpisodesRequest,
    run: {
      seeds: SeededRng;
      queueOf: (engine: AgentEngine) => ModelRequestQueue;
      batchSignal: AbortSignal;
      generateCalls: Record<string, number>;
      llmErrors: unknown[];
    },
  ): Promise<EpisodeTrace> {
    const started = performance.now();
    const clock = () => performance.now() - started;
    const { timeouts } = this.options;
    const scope = scopedSignal(
      run.batchSignal,
      timeouts.episodeMs,
      () => new EpisodeFailure('episode_timeout', `the episode ran past ${timeouts.episodeMs} ms`),
    );
    const executions: NodeExecution[] = [];
    let state: unknown = this.graph.state.parse({});
    const maxRounds = this.environment.maxRounds;
    let current: string | undefined;
    try {
      for (let round = 0; round < maxRounds && !row.episode.done; round++) {
        row.teamContext.length = 0;
        row.outputs.clear();
        const visits = new Map<string, number>();
        const traversals = new Map<string, number>();
        const calls = new Map<string, number>();
        const context = (): GraphContext<unknown> => ({
          state,
          row,
          episode: row.episode,
          environment: this.environment,
          round,
          maxRounds,
          isLastRound: round === maxRounds - 1,
          step: round,
          isLastStep: round === maxRounds - 1,
          settings: this.settings,
          visits: (node) => visits.get(node) ?? 0,
          traversals: (counter) => traversals.get(counter) ?? 0,
          signal: scope.signal,
        });
        let at = this.follow(START, context(), traversals);
        while (at !== END) {
          // A node starts only in an episode still running (a batch timeout reaches episodes not started yet too).
          if (scope.signal.aborted) throw abortReason(scope.signal);
          current = at;
          const node = this.graph.nodes.get(at)!;
          visits.set(at, (visits.get(at) ?? 0) + 1);
          const before = state;
          const execution: NodeExecution = {
            node: at,
            kind: node.kind,
            step: round,
            stateBefore: before,
            stateAfter: before,
            startedMs: clock(),
            endedMs: 0,
          };
          executions.push(execution);
          const change = await this.execute(at, node, context(), execution, {
            ...run,
            calls,
            seedRoot: run.seeds,
            request,
            signal: scope.signal,
          });
          if (change !== undefined) state = this.graph.state.parse({ ...(state as object), ...change });
          execution.stateAfter = state;
          execution.endedMs = clock();
          at = this.follow(at, context(), traversals);
        }
        current = 'env.step';
        const action = this.orchestra.action(row);
        const envExecution: NodeExecution = {
          node: 'env.step',
          kind: 'env',
          step: round,
          input: action,
          stateBefore: state,
          stateAfter: state,
          startedMs: clock(),
          endedMs: 0,
        };
        executions.push(envExecution);
        const tool = scopedSignal(
          scope.signal,
          timeouts.toolMs,
          () => new EpisodeFailure('tool_timeout', `the environment's round ran past ${timeouts.toolMs} ms`, 'env.step'),
        );
        try {
          await untilAborted(this.environment.advance([row.episode], [action]), tool.signal);
        } finally {
          tool.dispose();
        }
        if (row.episode.failure !== undefined) throw new EpisodeFailure('environment_failed', row.episode.failure, 'env.step');
        recordTurnScores(this.orchestra, row, round, action.turnIndex);
        // traces.jsonl keeps its names (the node env.step, its step and stepScore) for the tools that read it.
        envExecution.output = { done: row.episode.done, stepScore: row.episode.roundScore, observation: row.episode.observation() };
        envExecution.metrics = row.episode.metrics();
        envExecution.endedMs = clock();
      }
      finishTrajectory(row);
      const trace: EpisodeTrace = {
        trajectoryId: row.trajectory.trajectoryId,
        groupId: row.trajectory.groupId,
        taskId: row.trajectory.taskId,
        status: 'completed',
        outcome: row.episode.outcome,
        executions,
        durationMs: clock(),
      };
      row.trajectory.info = { ...row.trajectory.info, trace };
      return trace;
    } catch (error) {
      const failure = scope.signal.aborted && scope.signal.reason instanceof EpisodeFailure ? scope.signal.reason : error;
      if (!(failure instanceof EpisodeFailure)) throw error;
      const last = executions.at(-1);
      if (last && last.endedMs === 0) {
        last.endedMs = clock();
        last.error = failure.message;
      }
      return this.failedTrace(
        row,
        failure.node ? failure : new EpisodeFailure(failure.reason, failure.message, current),
        executions,
        clock(),
      );
    } finally {
      scope.dispose();
    }
  }

  /** Records a failed episode on its trajectory: the reason, the partial trace, and (with `skip`) no turns to train. */
  private failedTrace(row: OrchestraRow, failure: EpisodeFailure, executions: NodeExecution[], durationMs: number): EpisodeTrace {
    finishTrajectory(row);
    const trace: EpisodeTrace = {
      trajectoryId: row.trajectory.trajectoryId,
      groupId: row.trajectory.groupId,
      taskId: row.trajectory.taskId,
      status: 'failed',
      failure: { reason: failure.reason, message: failure.message, node: failure.node },
      outcome: 0,
      executions,
      durationMs,
    };
    row.trajectory.outcome = 0;
    row.trajectory.done = false;
    row.trajectory.info = { ...row.trajectory.info, trace, failure: trace.failure };
    if (this.options.failedEpisodes === 'skip') row.trajectory.turns = [];
    return trace;
  }

  /** The first of `from`'s edges whose condition holds and whose limit is not reached; END when none. */
  private follow(from: string, ctx: GraphContext<unknown>, traversals: Map<string, number>): string {
    for (const edge of this.graph.edges) {
      if (edge.from !== from || (edge.when && !edge.when(ctx))) continue;
      if (!this.take(edge, ctx, traversals)) continue;
      return edge.to;
    }
    return END;
  }

  private take(edge: GraphEdge<unknown>, ctx: GraphContext<unknown>, traversals: Map<string, number>): boolean {
    if (edge.limit !== undefined) {
      const counter = counterOf(edge);
      const count = traversals.get(counter) ?? 0;
      if (count >= settingValue(edge.limit, ctx)) return false;
      traversals.set(counter, count + 1);
    } else {
      for (const counter of this.limitedInto.get(edge.to) ?? []) traversals.delete(counter);
    }
    return true;
  }

  private async execute(
    name: string,
    node: GraphNode<unknown>,
    ctx: GraphContext<unknown>,
    execution: NodeExecution,
    run: {
      queueOf: (engine: AgentEngine) => ModelRequestQueue;
      generateCalls: Record<string, number>;
      llmErrors: unknown[];
      calls: Map<string, number>;
      seedRoot: SeededRng;
      request: RunEpisodesRequest;
      signal: AbortSignal;
    },
  ): Promise<unknown> {
    const { timeouts } = this.options;
    if (node.kind === 'function') return node.run(ctx);
    if (node.kind === 'tool') {
      const tool = scopedSignal(
        run.signal,
        timeouts.toolMs,
        () => new EpisodeFailure('tool_timeout', `tool ${node.tool} ran past ${timeouts.toolMs} ms`, name),
      );
      execution.input = node.tool;
      try {
        const result = await untilAborted(node.call(ctx, tool.signal), tool.signal);
        execution.output = result;
        return node.update?.(result, ctx);
      } catch (error) {
        // A DrmasError is the user's to fix (a tool given the wrong environment): it stops the run, as a bad prompt does.
        if (error instanceof EpisodeFailure || error instanceof DrmasError || tool.signal.aborted) throw error;
        throw new EpisodeFailure(
          'tool_failed',
          `tool ${node.tool} failed: ${error instanceof Error ? error.message : String(error)}`,
          name,
        );
      } finally {
        tool.dispose();
      }
    }
    const agentId = node.agent;
    const agent = this.agents.get(agentId);
    if (!agent) {
      throw new DrmasError('UNKNOWN_NAME', `graph node "${name}" calls agent "${agentId}", which the orchestra does not declare`, {
        key: 'orchestra.name',
        hint: `add "${agentId}" to the orchestra's agents`,
      });
    }
    const engine = this.engineFor(agentId);
    const prompt = agentPrompt(agent, engine, ctx.row, ctx, node.variables?.(ctx));
    const sampling = { ...agent.sampling, ...run.request.sampling };
    // A request that fails (a prompt too long for the model, an engine error) fails this episode, not the run.
    const llmFailure = (error: unknown): EpisodeFailure => {
      run.llmErrors.push(error);
      const message = error instanceof Error ? error.message : String(error);
      return new EpisodeFailure('llm_failed', `agent ${agentId}'s request failed: ${message}`, name, error);
    };
    try {
      checkPromptRoom(agentId, [prompt], sampling.maxNewTokens, engine);
    } catch (error) {
      throw llmFailure(error);
    }
    const index = run.calls.get(agentId) ?? 0;
    run.calls.set(agentId, index + 1);
    run.generateCalls[agentId] = (run.generateCalls[agentId] ?? 0) + 1;
    const seed = run.seedRoot.fork(`${ctx.round}/${agentId}/${index}`).nextUint32();
    Object.assign(execution, { agent: agentId, modelId: engine.workerGroupId, input: prompt.text });
    const call = scopedSignal(
      run.signal,
      timeouts.llmMs,
      () => new EpisodeFailure('llm_timeout', `agent ${agentId}'s call ran past ${timeouts.llmMs} ms`, name),
    );
    try {
      const sample = await run
        .queueOf(engine)
        .submit({ prompt: prompt.ids, sampling: generateSettings(agent, sampling), seed, rowKey: ctx.row.index, signal: call.signal })
        .catch((error: unknown) => {
          throw error instanceof EpisodeFailure || call.signal.aborted ? error : llmFailure(error);
        });
      const output = recordAgentTurn(ctx.row, { agentId, agent, engine, prompt, sampling, round: ctx.round }, sample);
      Object.assign(execution, {
        turn: output.turn.index,
        output: output.text,
        parsed: { action: output.action, valid: output.valid, reason: output.reason },
        queueWaitMs: sample.queueWaitMs,
        batchRows: sample.batchRows,
      });
      return node.update?.(output, ctx);
    } finally {
      call.dispose();
    }
  }
}

/** The graph an orchestra runs on the executor: its own, or its blocks' (`blockGraph`). */
export function graphOf(orchestra: Orchestra): WorkflowGraph {
  return orchestra.graph ?? blockGraph(blocksOf(orchestra));
}
