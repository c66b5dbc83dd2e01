import { DrmasError, TRANSCRIPT_SUBMISSION, type AnswerFormat, type DebateTranscript, type Episode, type Turn } from '@drmas/core';
import type { PromptedAgentOptions } from '../agents/agentConfig.js';
import { call } from '../blocks/call.js';
import { loopUntil } from '../blocks/loopUntil.js';
import { sequential } from '../blocks/sequential.js';
import { majorityAnswer } from './majorityAnswer.js';
import { DEBATE_JUDGE_PROMPT, DEBATER_PROMPT } from './maverlPrompts.js';
import { defineOrchestra, NO_ACTION, type Orchestra } from './Orchestra.js';
import { boxedVote } from './VoteOrchestras.js';

/** `orchestra.rounds` when the config gives none. */
export const DEFAULT_ROUNDS = 2;
export const DEFAULT_DEBATERS: readonly string[] = ['pro', 'con'];
/** The judge model's role, called after the last round when `orchestra.judge` is `model`. */
export const JUDGE_ROLE = 'judge';

export interface DebateOptions {
  debaters?: readonly string[];
  judge?: 'none' | 'model';
  /** How the debaters' answers compare, for the majority without a judge (`orchestra.answerFormat`). */
  answers: () => AnswerFormat;
}

/**
 * The transcript of a round's turns (debaters' and the judge's, in call order), core's
 * `DebateTranscript`: what an environment that asks for it (`TRANSCRIPT_SUBMISSION`, env-debate) judges.
 */
export function debateTranscript(turns: readonly Turn[], debaters: readonly string[]): DebateTranscript {
  const spoken = new Map<string, number>();
  const transcript: DebateTranscript = { debaters: [...debaters], turns: [] };
  for (const turn of turns) {
    const text = turn.responseText ?? '';
    if (turn.agentId === JUDGE_ROLE) transcript.judge = text;
    else if (debaters.includes(turn.agentId)) {
      const round = (spoken.get(turn.agentId) ?? 0) + 1;
      spoken.set(turn.agentId, round);
      transcript.turns.push({ agent: turn.agentId, round, text });
    }
  }
  return transcript;
}

/**
 * The team's final answer from a step's turns: with a judge turn, the last answer of the debater its verdict names
 * (no valid verdict, or that debater gave no valid answer: none); without, the majority of each debater's last
 * answer, answers grouped by `equal` (ties to the debater who speaks first). Returns the answer and the turn it comes
 * from.
 */
export function debateAnswer(
  turns: readonly Turn[],
  debaters: readonly string[],
  equal: (answer: string, reference: string) => boolean,
): { answer: string; turn: Turn } | undefined {
  const last = debaters.map((d) => turns.findLast((turn) => turn.agentId === d));
  const judge = turns.findLast((turn) => turn.agentId === JUDGE_ROLE);
  if (judge) {
    const winner = judge.valid ? (judge.action as { content?: string } | undefined)?.content : undefined;
    const turn = winner === undefined ? undefined : last[debaters.indexOf(winner)];
    const answer = turn && boxedVote(turn);
    return turn && answer !== undefined ? { answer, turn } : undefined;
  }
  const vote = majorityAnswer(
    last.map((turn) => (turn ? boxedVote(turn) : undefined)),
    equal,
  );
  return vote && { answer: vote.answer, turn: last[vote.first]! };
}

function checkDebaters(debaters: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of debaters) {
    if (name === JUDGE_ROLE || seen.has(name) || !/^[a-z][a-z0-9_]*$/.test(name)) {
      throw new DrmasError('CONFIG_INVALID', `orchestra.debaters: "${name}" is not a usable debater role`, {
        key: 'orchestra.debaters',
        hint: `give each debater a distinct lower-case name (letters, digits, _) other than "${JUDGE_ROLE}", e.g. ["pro", "con"]`,
      });
    }
    seen.add(name);
  }
}

/**
 * MAVERL's debate runner: the debaters (`orchestra.debaters`, PRO and CON by default; each a role of its own, so
 * `agents.<name>` can put it on its own model) speak in turn for `orchestra.rounds` rounds, each seeing the whole
 * debate so far and giving an answer in `\boxed{}`; with `orchestra.judge: model` a `judge` agent then names the
 * winner (`<verdict>NAME</verdict>`, parsed strictly: one of the debaters, else the turn is invalid). The team's
 * answer is the judged winner's last answer, or without a judge the majority of the debaters' last answers.
 *
 * An environment that judges debates (env-debate) gets the transcript instead (`TRANSCRIPT_SUBMISSION`) and reports
 * each agent's reward in its episode's metrics (`per_turn` gives each turn its agent's); on any other environment
 * (math) each debater turn scores its own answer and the judge turn the answer it chose (through the episode's judge).
 */
export function createDebateOrchestra(options: DebateOptions): Orchestra {
  const debaters = [...(options.debaters ?? DEFAULT_DEBATERS)];
  checkDebaters(debaters);
  const judged = options.judge === 'model';
  const agents: Record<string, PromptedAgentOptions> = {};
  for (const name of debaters)
    agents[name] = {
      prompt: DEBATER_PROMPT.replace('{name}', name.toUpperCase()),
      tag: 'boxed',
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 1024 },
    };
  if (judged)
    agents[JUDGE_ROLE] = {
      prompt: DEBATE_JUDGE_PROMPT.replace('{debaters}', debaters.join(', ')),
      tag: 'verdict',
      values: debaters,
      stop: ['</verdict>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 256 },
    };
  const never = () => false;
  const debateRounds = loopUntil(never, sequential(...debaters.map((d) => call(d))), {
    maxLoops: (context) => (context.settings.rounds as number | undefined) ?? DEFAULT_ROUNDS,
  });
  const wantsTranscript = (episode: Episode) => episode.variables()[TRANSCRIPT_SUBMISSION.variable] === TRANSCRIPT_SUBMISSION.value;
  const finalAnswer = (turns: readonly Turn[]) => {
    const format = options.answers();
    return debateAnswer(turns, debaters, (a, b) => format.equal(a, b));
  };
  return defineOrchestra({
    name: 'debate',
    agents,
    round: judged ? sequential(debateRounds, call(JUDGE_ROLE)) : debateRounds,
    action: (row) => {
      const round = row.outputs.get(debaters[0]!)?.turn.round;
      const turns = row.trajectory.turns.filter((turn) => turn.round === round);
      if (wantsTranscript(row.episode))
        return { type: TRANSCRIPT_SUBMISSION.actionType, content: JSON.stringify(debateTranscript(turns, debaters)) };
      const final = finalAnswer(turns);
      return final
        ? { type: 'answer', content: final.turn.responseText ?? '', agentId: final.turn.agentId, turnIndex: final.turn.index }
        : NO_ACTION;
    },
    turnScores: (turns, judge, episode) => {
      const scores = new Map<number, number>();
      if (wantsTranscript(episode)) {
        // The environment judged the debate: each turn gets its agent's reward (win/loss or judge score).
        const metrics = episode.metrics();
        for (const turn of turns) scores.set(turn.index, metrics[`${TRANSCRIPT_SUBMISSION.rewardMetric}${turn.agentId}`] ?? 0);
        return scores;
      }
      if (!judge) return scores;
      const answerScore = (text: string, turn: Turn) =>
        judge({ type: 'answer', content: text, agentId: turn.agentId, turnIndex: turn.index });
      const final = finalAnswer(turns);
      for (const turn of turns) {
        if (turn.agentId === JUDGE_ROLE) scores.set(turn.index, final ? answerScore(final.turn.responseText ?? '', turn) : 0);
        else scores.set(turn.index, answerScore(turn.responseText ?? '', turn));
      }
      return scores;
    },
  });
}
