import {
  createToken,
  DrmasError,
  scoringTemperature,
  SeededRng,
  type EnvTask,
  type Environment,
  type Episode,
  type PolicyBackend,
  type TextCodec,
  type Trajectory,
  type Turn,
} from '@drmas/core';
import type { Agent, AgentSampling } from '../agents/Agent.js';
import type { AgentOutput, BlockContext, OrchestraRow } from '../blocks/Block.js';
import type { Orchestra } from '../orchestras/Orchestra.js';

/**
 * A prompt and its response must fit the model's positions. `maxNewTokens` alone is checked at validate; the prompt
 * (a template filled with the task and the team's earlier turns) is known only here, before sampling allocates.
 */
function checkPromptRoom(agentId: string, prompts: ReadonlyArray<{ ids: number[] }>, maxNewTokens: number, engine: AgentEngine): void {
  const positions = engine.backend.maxPositions;
  if (positions === undefined) return;
  const longest = prompts.reduce((most, p) => Math.max(most, p.ids.length), 0);
  if (longest + maxNewTokens <= positions) return;
  throw new DrmasError(
    'LIMIT_EXCEEDED',
    `agent ${agentId}'s longest prompt has ${longest.toLocaleString('en-US')} tokens, which with agents.${agentId}.sampling.maxNewTokens ` +
      `${maxNewTokens.toLocaleString('en-US')} exceeds the ${positions.toLocaleString('en-US')} positions of model ${engine.workerGroupId}`,
    {
      key: `agents.${agentId}.prompt`,
      hint: `shorten agents.${agentId}.prompt or lower agents.${agentId}.sampling.maxNewTokens (earlier turns enter the prompt as team context, more with each of orchestra.maxLoops)`,
    },
  );
}

/** The engine an agent samples from: its worker group's rollout backend and the model's codec. */
export interface AgentEngine {
  workerGroupId: string;
  backend: PolicyBackend;
  codec: TextCodec;
}

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
  /** Root of the sampling seeds: each agent call derives its own from (seed, step, agent, call). */
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
  /** Batched generate calls per agent. */
  generateCalls: Record<string, number>;
}

/** Runs episodes of the configured environment through the configured orchestra (`drmas eval`, custom loops). */
export interface EpisodeRunner {
  readonly environment: Environment;
  readonly orchestra: Orchestra;
  run(request: RunEpisodesRequest): Promise<EpisodeRun>;
}

export const EpisodeRunner = createToken<EpisodeRunner>('EpisodeRunner', { label: 'episode runner' });

/**
 * Runs episodes of an environment through an orchestra, step by step until every episode is done or the step
 * limit. Records one Turn per row per agent call, with the ids and log-probs exactly as the backend sampled them.
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
    const rows = this.createRows(request);
    const maxSteps = this.environment.maxSteps;
    const seeds = new SeededRng(request.seed);
    const calls = new Map<string, number>();
    const generateCalls: Record<string, number> = {};
    for (let step = 0; step < maxSteps; step++) {
      const active = rows.filter((row) => !row.episode.done);
      if (active.length === 0) break;
      for (const row of active) {
        row.teamContext.length = 0;
        row.outputs.clear();
      }
      const context: BlockContext = {
        step,
        maxSteps,
        isLastStep: step === maxSteps - 1,
        settings: this.settings,
        callAgent: async (agentId, callRows) => {
          const index = calls.get(`${step}/${agentId}`) ?? 0;
          calls.set(`${step}/${agentId}`, index + 1);
          generateCalls[agentId] = (generateCalls[agentId] ?? 0) + 1;
          const seed = seeds.fork(`${step}/${agentId}/${index}`).nextUint32();
          await this.callAgent(agentId, callRows, context, { seed, byRow: request.sampleStreams === 'row' }, request.sampling);
        },
      };
      await this.orchestra.step(active, context);
      const actions = active.map((row) => this.orchestra.action(row));
      await this.environment.step(
        active.map((row) => row.episode),
        actions,
      );
      active.forEach((row, i) => this.recordTurnScores(row, step, actions[i]!.turnIndex));
    }
    for (const row of rows) {
      row.trajectory.done = row.episode.done;
      row.trajectory.outcome = row.episode.outcome;
      row.trajectory.info = { ...row.trajectory.info, metrics: row.episode.metrics() };
    }
    return { trajectories: rows.map((row) => row.trajectory), episodes: rows.map((row) => row.episode), generateCalls };
  }

  /** `turn.info.turnScore` of this step's turns: the orchestra's turn scores when it has them, else the acting turn's step score. */
  private recordTurnScores(row: OrchestraRow, step: number, actingTurn: number | undefined): void {
    const { episode, trajectory } = row;
    const scores = new Map<number, number>();
    if (actingTurn !== undefined && episode.stepScore !== undefined) scores.set(actingTurn, episode.stepScore);
    if (this.orchestra.turnScores && episode.judge) {
      const judge = episode.judge.bind(episode);
      for (const [index, score] of this.orchestra.turnScores(
        trajectory.turns.filter((turn) => turn.step === step),
        judge,
      ))
        scores.set(index, score);
    }
    for (const [index, score] of scores) {
      const turn = trajectory.turns[index];
      if (!turn)
        throw new Error(
          `orchestra "${this.orchestra.name}" scored turn ${index}, but trajectory ${trajectory.trajectoryId} has ${trajectory.turns.length} turns`,
        );
      turn.info = { ...turn.info, turnScore: score };
    }
  }

  private createRows(request: RunEpisodesRequest): OrchestraRow[] {
    const rows: OrchestraRow[] = [];
    const firstTask = request.firstTask ?? 0;
    const firstRow = firstTask * request.samplesPerTask;
    request.tasks.forEach((task, t) => {
      const groupId = `${request.idPrefix}-p${firstTask + t}`;
      for (let s = 0; s < request.samplesPerTask; s++) {
        const trajectory: Trajectory = {
          groupId,
          trajectoryId: `${groupId}-n${s}`,
          taskId: task.id,
          dataSource: task.dataSource,
          turns: [],
          done: false,
        };
        rows.push({
          index: firstRow + rows.length,
          episode: this.environment.reset(task),
          trajectory,
          teamContext: [],
          outputs: new Map(),
        });
      }
    });
    return rows;
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
    const prompts = rows.map((row) => {
      const observation = row.episode.observation();
      const variables = {
        ...row.episode.variables(),
        observation,
        team_context: row.teamContext.join('\n\n'),
        step: String(context.step + 1),
        max_steps: String(context.maxSteps),
      };
      const { text, templated } = agent.format(agent.prompt(variables), engine.codec);
      return { observation, text, ids: engine.codec.encode(text, { addSpecialTokens: !templated }) };
    });
    const sampling = { ...agent.sampling, ...overrides };
    checkPromptRoom(agentId, prompts, sampling.maxNewTokens, engine);
    const result = await engine.backend.generate({
      prompts: prompts.map((p) => p.ids),
      temperature: sampling.temperature,
      topP: sampling.topP,
      topK: sampling.topK,
      maxNewTokens: sampling.maxNewTokens,
      stopStrings: agent.stop.length > 0 ? [...agent.stop] : undefined,
      seed: streams.seed,
      rowKeys: streams.byRow ? rows.map((row) => row.index) : undefined,
    });
    if (result.tokenIds.length !== rows.length || result.logProbs.length !== rows.length || result.finishReasons.length !== rows.length) {
      throw new Error(`backend "${engine.backend.name}" returned ${result.tokenIds.length} rows for ${rows.length} prompts`);
    }
    rows.forEach((row, i) => {
      const prompt = prompts[i]!;
      const responseIds = result.tokenIds[i]!;
      const text = engine.codec.decode(responseIds, { skipSpecialTokens: true });
      const finishReason = result.finishReasons[i];
      const parsed = agent.parse(text, finishReason);
      const { trajectory } = row;
      const turn: Turn = {
        groupId: trajectory.groupId,
        trajectoryId: trajectory.trajectoryId,
        agentId,
        step: context.step,
        workerGroupId: engine.workerGroupId,
        index: trajectory.turns.length,
        promptIds: prompt.ids,
        responseIds,
        logProbs: result.logProbs[i]!,
        temperature: scoringTemperature(sampling.temperature),
        promptText: prompt.text,
        responseText: text,
        action: parsed.action,
        valid: parsed.valid,
        finishReason,
        observation: prompt.observation,
      };
      if (parsed.reason !== undefined) turn.invalidReason = parsed.reason;
      trajectory.turns.push(turn);
      const output: AgentOutput = { agentId, text, action: parsed.action, valid: parsed.valid, reason: parsed.reason, turn };
      row.outputs.set(agentId, output);
      row.teamContext.push(`The output of "${agentId}": ${text}`);
    });
  }
}
