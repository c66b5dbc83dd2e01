import { createToken, DrmasError, SeededRng, type EnvTask, type Environment, type Episode, type Trajectory } from '@drmas/core';
import type { Agent, AgentSampling } from '../agents/Agent.js';
import type { BlockContext, OrchestraRow } from '../blocks/Block.js';
import { blocksOf, type Orchestra } from '../orchestras/Orchestra.js';
import { agentPrompt, checkPromptRoom, recordAgentTurn, type AgentEngine } from './agentTurns.js';
import type { EpisodeTrace } from '../trace/EpisodeTrace.js';
import type { ExecutorRunStats } from '../executor/GraphExecutor.js';
import { createRows, finishTrajectory, generateSettings, recordEnvironmentFailure, recordTurnScores } from './episodeRows.js';

export type { AgentEngine } from './agentTurns.js';

export interface OrchestraRunnerOptions {
  environment: Environment;
  orchestra: Orchestra;
  /** Agents by role; every role the orchestra calls must be here. */
  agents: ReadonlyMap<string, Agent>;
  engineFor: (agentId: string) => AgentEngine;
  /** The `orchestra` config section, seen by blocks as `context.settings`. */
  settings?: Readonly<Record<string, unknown>>;
}

export interface RunEpisodesRequest {
  tasks: readonly EnvTask[];
  /** Episodes per task (one group each). */
  samplesPerTask: number;
  /** Root of the sampling seeds: each agent call derives its own from (seed, round, agent, call). */
  seed: number;
  /** Makes group and trajectory ids unique across calls, e.g. `s3r0`. */
  idPrefix: string;
  /**
   * Index of the first of `tasks` in the whole batch, when a batch runs in parts (one prompt group per rollout
   * worker): group ids and row indices (the rows' sampling keys) continue from it, so each part samples and names
   * its episodes as the whole batch run at once would. Default 0.
   */
  firstTask?: number;
  /**
   * What keys each row's sampling stream (`GenerateRequest.rowKeys`): `position`, its place in each generate call
   * (the default), or `row`, its index in the whole batch (`OrchestraRow.index`), so that a batch run in parts
   * samples each row as the whole batch run at once would.
   */
  sampleStreams?: 'position' | 'row';
  /** Replaces agents' sampling settings (evaluation: temperature 0.6, top-p 0.95). */
  sampling?: Partial<AgentSampling>;
}

export interface EpisodeRun {
  trajectories: Trajectory[];
  episodes: Episode[];
  /**
   * Batched generate calls per agent (lock-step); the async executor counts each agent's calls, one per row, and
   * its generate calls per model in `executor.models`.
   */
  generateCalls: Record<string, number>;
  /** Every episode's trace (the async executor; absent in lock-step). */
  traces?: EpisodeTrace[];
  /** The async executor's queue figures and failures. */
  executor?: ExecutorRunStats;
}

/** Runs episodes of the configured environment through the configured orchestra (`drmas eval`, custom loops). */
export interface EpisodeRunner {
  readonly environment: Environment;
  readonly orchestra: Orchestra;
  run(request: RunEpisodesRequest): Promise<EpisodeRun>;
}

export const EpisodeRunner = createToken<EpisodeRunner>('EpisodeRunner', { label: 'episode runner' });

/**
 * Runs episodes of an environment through an orchestra, round by round until every episode is done or
 * `maxRounds`. Records one Turn per row per agent call, with the ids and log-probs exactly as the backend sampled them.
 */
export class OrchestraRunner implements EpisodeRunner {
  readonly environment: Environment;
  readonly orchestra: Orchestra;
  private readonly agents: ReadonlyMap<string, Agent>;
  private readonly engineFor: (agentId: string) => AgentEngine;
  private readonly settings: Readonly<Record<string, unknown>>;

  constructor(options: OrchestraRunnerOptions) {
    this.environment = options.environment;
    this.orchestra = options.orchestra;
    this.agents = options.agents;
    this.engineFor = options.engineFor;
    this.settings = options.settings ?? {};
  }

  agent(agentId: string): Agent {
    const found = this.agents.get(agentId);
    if (!found) {
      throw new DrmasError('UNKNOWN_NAME', `orchestra "${this.orchestra.name}" calls agent "${agentId}", which it does not declare`, {
        key: 'orchestra.name',
        hint: `add "${agentId}" to the orchestra's agents (roles: ${[...this.agents.keys()].join(', ')})`,
      });
    }
    return found;
  }

  async run(request: RunEpisodesRequest): Promise<EpisodeRun> {
    const rows = createRows(this.environment, request);
    const blocks = blocksOf(this.orchestra);
    const maxRounds = this.environment.maxRounds;
    const seeds = new SeededRng(request.seed);
    const calls = new Map<string, number>();
    const generateCalls: Record<string, number> = {};
    for (let round = 0; round < maxRounds; round++) {
      const active = rows.filter((row) => !row.episode.done);
      if (active.length === 0) break;
      for (const row of active) {
        row.teamContext.length = 0;
        row.outputs.clear();
      }
      const context: BlockContext = {
        round,
        maxRounds,
        isLastRound: round === maxRounds - 1,
        step: round,
        isLastStep: round === maxRounds - 1,
        settings: this.settings,
        callAgent: async (agentId, callRows) => {
          const index = calls.get(`${round}/${agentId}`) ?? 0;
          calls.set(`${round}/${agentId}`, index + 1);
          generateCalls[agentId] = (generateCalls[agentId] ?? 0) + 1;
          const seed = seeds.fork(`${round}/${agentId}/${index}`).nextUint32();
          await this.callAgent(agentId, callRows, context, { seed, byRow: request.sampleStreams === 'row' }, request.sampling);
        },
      };
      await blocks(active, context);
      const actions = active.map((row) => this.orchestra.action(row));
      await this.environment.advance(
        active.map((row) => row.episode),
        actions,
      );
      active.forEach((row, i) => recordTurnScores(this.orchestra, row, round, actions[i]!.turnIndex));
    }
    for (const row of rows) {
      finishTrajectory(row);
      recordEnvironmentFailure(row);
    }
    return { trajectories: rows.map((row) => row.trajectory), episodes: rows.map((row) => row.episode), generateCalls };
  }

  private async callAgent(
    agentId: string,
    rows: OrchestraRow[],
    context: BlockContext,
    streams: { seed: number; byRow: boolean },
    overrides?: Partial<AgentSampling>,
  ): Promise<void> {
    const agent = this.agent(agentId);
    const engine = this.engineFor(agentId);
    const prompts = rows.map((row) => agentPrompt(agent, engine, row, context));
    const sampling = { ...agent.sampling, ...overrides };
    checkPromptRoom(agentId, prompts, sampling.maxNewTokens, engine);
    const result = await engine.backend.generate({
      prompts: prompts.map((p) => p.ids),
      ...generateSettings(agent, sampling),
      seed: streams.seed,
      rowKeys: streams.byRow ? rows.map((row) => row.index) : undefined,
    });
    if (result.tokenIds.length !== rows.length || result.logProbs.length !== rows.length || result.finishReasons.length !== rows.length) {
      throw new Error(`backend "${engine.backend.name}" returned ${result.tokenIds.length} rows for ${rows.length} prompts`);
    }
    rows.forEach((row, i) =>
      recordAgentTurn(
        row,
        { agentId, agent, engine, prompt: prompts[i]!, sampling, round: context.round },
        { tokenIds: result.tokenIds[i]!, logProbs: result.logProbs[i]!, finishReason: result.finishReasons[i]! },
      ),
    );
  }
}
