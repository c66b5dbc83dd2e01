import type { AnswerFormat, DebateTranscript } from '@drmas/core';

/** How much each criterion counts in an agent's score (a weighted mean; correctness only where there is a reference). */
export interface JudgeWeights {
  structure: number;
  evidence: number;
  consistency: number;
  correctness: number;
}

export const DEFAULT_JUDGE_WEIGHTS: Readonly<JudgeWeights> = Object.freeze({ structure: 1, evidence: 1, consistency: 1, correctness: 3 });

/** One debater's marks, each in [0, 1], and its score (their weighted mean). */
export interface AgentJudgement {
  agent: string;
  structure: number;
  evidence: number;
  consistency: number;
  /** 1 when the final answer equals the reference (by the answer format); absent without a reference. */
  correctness?: number;
  /** The agent's last answer (by the answer format: the last `\boxed{}` for `math`). */
  finalAnswer?: string;
  score: number;
}

const REASON = /\b(because|since|therefore|thus|hence|as a result)\b/i;
const SENTENCE_END = /[.!?](?=\s|$)/g;
const EVIDENCE = /\b(for example|for instance|e\.g\.|according to|evidence|data|stud(?:y|ies)|shows?)\b/gi;
const NUMBER = /\d/;

/** Argument structure: half for a reason given (`because`, `therefore`, ...), half for two sentences or more. */
export function structureOf(text: string): number {
  return (REASON.test(text) ? 0.5 : 0) + ((text.match(SENTENCE_END)?.length ?? 0) >= 2 ? 0.5 : 0);
}

/** Evidence markers (`for example`, `according to`, `data`, ... each, and any figure once), two or more for full marks. */
export function evidenceOf(text: string): number {
  const hits = (text.match(EVIDENCE)?.length ?? 0) + (NUMBER.test(text) ? 1 : 0);
  return Math.min(1, hits / 2);
}

/**
 * Each debater's marks from its turns, and the winners: every debater with the top score (more than one on a tie).
 * `answers` reads each turn's answer and compares answers (env-math's `math`: the last `\boxed{}`, equal as math).
 */
export function judgeByRules(
  transcript: DebateTranscript,
  reference: string | undefined,
  answers: AnswerFormat,
  weights: JudgeWeights = DEFAULT_JUDGE_WEIGHTS,
): { agents: AgentJudgement[]; winners: string[] } {
  const agents = transcript.debaters.map((agent): AgentJudgement => {
    const texts = transcript.turns.filter((turn) => turn.agent === agent).map((turn) => turn.text);
    const given = texts.map((text) => answers.extract(text));
    const finalAnswer = given.findLast((answer) => answer !== undefined);
    const mean = (marks: number[]) => (marks.length === 0 ? 0 : marks.reduce((a, b) => a + b, 0) / marks.length);
    const marks = {
      structure: mean(texts.map(structureOf)),
      evidence: mean(texts.map(evidenceOf)),
      // The share of its turns that give the answer it ends on: switching answers, or giving none, counts against it.
      consistency:
        finalAnswer === undefined ? 0 : mean(given.map((answer) => (answer !== undefined && answers.equal(answer, finalAnswer) ? 1 : 0))),
      correctness: reference === undefined ? undefined : finalAnswer !== undefined && answers.equal(finalAnswer, reference) ? 1 : 0,
    };
    let total = weights.structure * marks.structure + weights.evidence * marks.evidence + weights.consistency * marks.consistency;
    let weight = weights.structure + weights.evidence + weights.consistency;
    if (marks.correctness !== undefined) {
      total += weights.correctness * marks.correctness;
      weight += weights.correctness;
    }
    return { agent, ...marks, finalAnswer, score: weight > 0 ? total / weight : 0 };
  });
  const top = Math.max(...agents.map((a) => a.score));
  // Marks are sums of halves and quarters over few turns, so equal scores compare equal up to rounding.
  const winners = agents.filter((a) => Math.abs(a.score - top) < 1e-9).map((a) => a.agent);
  return { agents, winners };
}
