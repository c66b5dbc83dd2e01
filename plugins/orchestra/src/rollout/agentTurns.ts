import { DrmasError, makeTurn, scoringTemperature, type GenerateResult, type PolicyBackend, type TextCodec } from '@drmas/core';
import type { Agent, AgentSampling } from '../agents/Agent.js';
import type { AgentOutput, OrchestraRow } from '../blocks/Block.js';

/** The engine an agent samples from: its worker group's rollout backend and the model's codec. */
export interface AgentEngine {
  workerGroupId: string;
  backend: PolicyBackend;
  codec: TextCodec;
}

/** A row's prompt for one agent call: the observation it saw, the templated text and its token ids. */
export interface AgentPrompt {
  observation: string;
  text: string;
  ids: number[];
}

/** Where in the episode an agent call happens (its prompt's `{round}` and `{max_rounds}`). */
export interface CallPlace {
  /** 0-based round of the episode. */
  round: number;
  maxRounds: number;
}

/**
 * The row's prompt for `agent`: the task's variables, the observation, the round's team context, `{round}` (1-based),
 * `{max_rounds}` (and, deprecated since 0.2.0, the same as `{step}` and `{max_steps}`), and `extra`.
 */
export function agentPrompt(
  agent: Agent,
  engine: AgentEngine,
  row: OrchestraRow,
  place: CallPlace,
  extra?: Record<string, string>,
): AgentPrompt {
  const observation = row.episode.observation();
  const variables = {
    ...row.episode.variables(),
    ...extra,
    observation,
    team_context: row.teamContext.join('\n\n'),
    round: String(place.round + 1),
    max_rounds: String(place.maxRounds),
    step: String(place.round + 1),
    max_steps: String(place.maxRounds),
  };
  const { text, templated } = agent.format(agent.prompt(variables), engine.codec);
  return { observation, text, ids: engine.codec.encode(text, { addSpecialTokens: !templated }) };
}

/**
 * A prompt and its response must fit the model's positions. `maxNewTokens` alone is checked at validate; the prompt
 * (a template filled with the task and the team's earlier turns) is known only here, before sampling allocates.
 */
export function checkPromptRoom(
  agentId: string,
  prompts: ReadonlyArray<{ ids: number[] }>,
  maxNewTokens: number,
  engine: AgentEngine,
): void {
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

/** One row's share of a generate result. */
export interface RowSample {
  tokenIds: number[];
  logProbs: number[];
  finishReason: GenerateResult['finishReasons'][number];
}

/**
 * Records an agent call's sample on its row: decodes and parses it, appends the Turn (ids and log-probs exactly as
 * sampled) to the trajectory, and makes it the agent's latest output and a line of the step's team context.
 */
export function recordAgentTurn(
  row: OrchestraRow,
  call: { agentId: string; agent: Agent; engine: AgentEngine; prompt: AgentPrompt; sampling: AgentSampling; round: number },
  sample: RowSample,
): AgentOutput {
  const { agentId, agent, engine, prompt, sampling } = call;
  const text = engine.codec.decode(sample.tokenIds, { skipSpecialTokens: true });
  const parsed = agent.parse(text, sample.finishReason);
  const { trajectory } = row;
  const turn = makeTurn({
    groupId: trajectory.groupId,
    trajectoryId: trajectory.trajectoryId,
    agentId,
    round: call.round,
    workerGroupId: engine.workerGroupId,
    index: trajectory.turns.length,
    promptIds: prompt.ids,
    responseIds: sample.tokenIds,
    logProbs: sample.logProbs,
    temperature: scoringTemperature(sampling.temperature),
    promptText: prompt.text,
    responseText: text,
    action: parsed.action,
    valid: parsed.valid,
    finishReason: sample.finishReason,
    observation: prompt.observation,
  });
  if (parsed.reason !== undefined) turn.invalidReason = parsed.reason;
  trajectory.turns.push(turn);
  const output: AgentOutput = { agentId, text, action: parsed.action, valid: parsed.valid, reason: parsed.reason, turn };
  row.outputs.set(agentId, output);
  row.teamContext.push(`The output of "${agentId}": ${text}`);
  return output;
}
