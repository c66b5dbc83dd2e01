import type { AnswerFormat, EnvAction, Turn } from '@drmas/core';
import type { OrchestraRow } from '../blocks/Block.js';
import { call } from '../blocks/call.js';
import { loopUntil } from '../blocks/loopUntil.js';
import { sequential } from '../blocks/sequential.js';
import { majorityAnswer } from './majorityAnswer.js';
import { SUMMARIZER_PROMPT, VOTE_SOLVER_PROMPT } from './maverlPrompts.js';
import { actionFrom, defineOrchestra, NO_ACTION, type Orchestra } from './Orchestra.js';

/** `orchestra.solvers` when the config gives none: MAVERL's three voters. */
export const DEFAULT_SOLVERS = 3;

const never = () => false;

/** The `solver` role called `orchestra.solvers` times (K), each call its own batched generate and its own seed. */
const kSolvers = loopUntil(never, call('solver'), {
  maxLoops: (context) => (context.settings.solvers as number | undefined) ?? DEFAULT_SOLVERS,
});

/** This round's turns of `agentId` on the row, in call order. */
export function roundTurns(row: OrchestraRow, agentId: string): Turn[] {
  const round = row.outputs.get(agentId)?.turn.round;
  return round === undefined ? [] : row.trajectory.turns.filter((turn) => turn.round === round && turn.agentId === agentId);
}

/** A turn's vote: its parsed `\boxed{}` answer, or undefined (an abstention) when the output was invalid. */
export function boxedVote(turn: Turn): string | undefined {
  return turn.valid ? (turn.action as { content?: string } | undefined)?.content : undefined;
}

/** Each turn scored on its own answer (`judge` of its whole text): what `per_turn` gives every solver; none without a judge. */
function ownAnswerScores(turns: readonly Turn[], judge: ((action: EnvAction) => number) | undefined): Map<number, number> {
  if (!judge) return new Map();
  return new Map(
    turns.map((turn) => [
      turn.index,
      judge({ type: 'answer', content: turn.responseText ?? '', agentId: turn.agentId, turnIndex: turn.index }),
    ]),
  );
}

/**
 * MAVERL's majority voting: K solvers (`orchestra.solvers`, one `solver` role sampled K times from the question
 * alone) each answer in `\boxed{}`; the team's answer is the most frequent valid one (answers the AnswerFormat
 * `answers()` finds equal count as one: `orchestra.answerFormat`, env-math's `math` by default; a tie goes to the tied
 * answer given first; invalid outputs abstain; no valid answer is an invalid action). Rewards: `drmas` gives every
 * solver the team's outcome, `per_turn` each solver its own answer's correctness.
 */
export function createMajorityVoteOrchestra(answers: () => AnswerFormat): Orchestra {
  return defineOrchestra({
    name: 'majority_vote',
    agents: { solver: { prompt: VOTE_SOLVER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 1024 } } },
    round: kSolvers,
    action: (row) => {
      const turns = roundTurns(row, 'solver');
      const format = answers();
      const vote = majorityAnswer(turns.map(boxedVote), (a, b) => format.equal(a, b));
      if (!vote) return NO_ACTION;
      const turn = turns[vote.first]!;
      // The whole text of the first solver that gave it, so the environment grades a solution (env-math's checkSteps too).
      return { type: 'answer', content: turn.responseText ?? '', agentId: 'solver', turnIndex: turn.index };
    },
    turnScores: ownAnswerScores,
  });
}

/**
 * MAVERL's summary runner: K solvers answer independently (as in majority voting), then the `summarizer` reads
 * their solutions (team context) and writes the team's final answer. Rewards: `drmas` gives every turn the
 * outcome of the summarizer's answer; `per_turn` scores each solver and the summarizer on their own answers.
 */
export function createSummaryOrchestra(): Orchestra {
  return defineOrchestra({
    name: 'summary',
    agents: {
      solver: { prompt: VOTE_SOLVER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 1024 } },
      summarizer: { prompt: SUMMARIZER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 1024 } },
    },
    round: sequential(kSolvers, call('summarizer')),
    action: (row) => actionFrom(row, 'summarizer', 'answer', 'text') ?? NO_ACTION,
    turnScores: ownAnswerScores,
  });
}
