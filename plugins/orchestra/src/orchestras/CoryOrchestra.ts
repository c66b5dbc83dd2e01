import type { EnvAction, Turn } from '@drmas/core';
import { call } from '../blocks/call.js';
import { sequential } from '../blocks/sequential.js';
import { actionFrom, defineOrchestra, NO_ACTION, type Orchestra } from './Orchestra.js';

export const CORY_PIONEER_PROMPT = `Problem: {question}

Solve the problem step by step. Reason inside <think> </think>, then give the final answer inside \\boxed{}.`;

export const CORY_OBSERVER_PROMPT = `Problem: {question}

Another solver's answer:
{team_context}

Solve the problem step by step, using the answer above where it helps. Reason inside <think> </think>, then give the final answer inside \\boxed{}.`;

/**
 * CORY's collective reward: every turn of the step gets the sum of the pioneer's and the observer's task rewards
 * (`cory.py` gives both PPO trainers r1 + r2), each answer judged by the environment on its own.
 */
function cooperativeScores(turns: readonly Turn[], judge: (action: EnvAction) => number): Map<number, number> {
  let total = 0;
  for (const turn of turns)
    total += judge({ type: 'answer', content: turn.responseText ?? '', agentId: turn.agentId, turnIndex: turn.index });
  return new Map(turns.map((turn) => [turn.index, total]));
}

/**
 * CORY (Ma et al. 2024, "Coevolving with the Other You"): the pioneer answers the task, the observer answers it with
 * the pioneer's answer in its prompt (`{team_context}`: `The output of "pioneer": ...`, CORY's knowledge transfer);
 * both turns score the sum of the two answers' rewards (`reward.allocator: per_turn`). The episode's answer, what
 * evaluation scores, is the pioneer's: the model on its own, as a CORY-trained model is used. The role exchange is the
 * trainer's `trainer.roleSwap`.
 */
export function createCoryOrchestra(): Orchestra {
  const answer = { tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 1024 } };
  return defineOrchestra({
    name: 'cory',
    agents: {
      pioneer: { prompt: CORY_PIONEER_PROMPT, ...answer },
      observer: { prompt: CORY_OBSERVER_PROMPT, ...answer },
    },
    round: sequential(call('pioneer'), call('observer')),
    action: (row) => actionFrom(row, 'pioneer', 'answer', 'text') ?? NO_ACTION,
    turnScores: cooperativeScores,
  });
}
