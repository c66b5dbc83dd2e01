import { describe, expect, test } from '@jest/globals';
import { extractBoxedAnswer, type AnswerFormat, type DebateTranscript } from '@drmas/core';
import { evidenceOf, judgeByRules, judgeDebate, parseVerdict, structureOf } from '../src/index.js';
import { EXACT_ANSWERS } from './fixtures.js';

// PRO: a reason ("Because"), two sentences, "For example" and figures, and the right answer twice.
const PRO_1 = 'Because 17 + 25 carries a ten, the sum is 42. For example, 20 + 22 = 42. \\boxed{42}';
const PRO_2 = 'I keep my answer \\boxed{42}.';
// CON: a bare answer, then a different one with a reason.
const CON_1 = '\\boxed{40}';
const CON_2 = 'Therefore it is 41. \\boxed{41}';

const transcript = (judge?: string): DebateTranscript => ({
  debaters: ['pro', 'con'],
  turns: [
    { agent: 'pro', round: 1, text: PRO_1 },
    { agent: 'con', round: 1, text: CON_1 },
    { agent: 'pro', round: 2, text: PRO_2 },
    { agent: 'con', round: 2, text: CON_2 },
  ],
  ...(judge !== undefined ? { judge } : {}),
});

const weights = { structure: 1, evidence: 1, consistency: 1, correctness: 3 };
const judging = (reward: 'win' | 'score') => ({ reward, weights, answers: EXACT_ANSWERS });

describe('rule judge marks, worked by hand', () => {
  test('structure: half for a reason, half for two sentences', () => {
    expect(structureOf(PRO_1)).toBe(1); // "Because", and ". " twice
    expect(structureOf(PRO_2)).toBe(0); // one sentence, no reason
    expect(structureOf(CON_1)).toBe(0);
    expect(structureOf(CON_2)).toBe(0.5); // "Therefore", one sentence end followed by a space
  });

  test('evidence: each marker and any figure once, two for full marks', () => {
    expect(evidenceOf(PRO_1)).toBe(1); // "For example" + figures
    expect(evidenceOf(PRO_2)).toBe(0.5); // a figure
    expect(evidenceOf('According to the data, it works.')).toBe(1); // two markers, no figure
    expect(evidenceOf('It just works.')).toBe(0);
  });

  test('scores: weighted mean of structure, evidence, consistency and correctness', () => {
    const { agents, winners } = judgeByRules(transcript(), '42', EXACT_ANSWERS, weights);
    const [pro, con] = agents;
    // PRO: structure (1+0)/2, evidence (1+0.5)/2, consistent (42, 42), right: (0.5 + 0.75 + 1 + 3) / 6
    expect(pro).toMatchObject({ structure: 0.5, evidence: 0.75, consistency: 1, correctness: 1, finalAnswer: '42' });
    expect(pro!.score).toBeCloseTo(5.25 / 6, 12);
    // CON: structure (0+0.5)/2, evidence (0.5+0.5)/2, one of two turns gives its final 41, wrong: (0.25+0.5+0.5+0)/6
    expect(con).toMatchObject({ structure: 0.25, evidence: 0.5, consistency: 0.5, correctness: 0, finalAnswer: '41' });
    expect(con!.score).toBeCloseTo(1.25 / 6, 12);
    expect(winners).toEqual(['pro']);
  });

  test('without a reference the mean leaves correctness out', () => {
    const { agents } = judgeByRules(transcript(), undefined, EXACT_ANSWERS, weights);
    expect(agents[0]!.correctness).toBeUndefined();
    expect(agents[0]!.score).toBeCloseTo(2.25 / 3, 12);
    expect(agents[1]!.score).toBeCloseTo(1.25 / 3, 12);
  });

  test('answers are read and compared by the answer format: consistency and correctness follow its equality', () => {
    const numeric: AnswerFormat = { extract: extractBoxedAnswer, equal: (a, b) => Number(a) === Number(b) };
    const rewritten: DebateTranscript = {
      debaters: ['pro'],
      turns: [
        { agent: 'pro', round: 1, text: '\\boxed{42}' },
        { agent: 'pro', round: 2, text: '\\boxed{42.0}' },
      ],
    };
    // Exactly: the final 42.0 is one of two answers, and not the reference 42. As numbers: both, and right.
    expect(judgeByRules(rewritten, '42', EXACT_ANSWERS, weights).agents[0]).toMatchObject({ consistency: 0.5, correctness: 0 });
    expect(judgeByRules(rewritten, '42', numeric, weights).agents[0]).toMatchObject({ consistency: 1, correctness: 1 });
  });

  test('a debater that never spoke scores 0; equal scores tie', () => {
    const same: DebateTranscript = {
      debaters: ['a', 'b', 'c'],
      turns: [
        { agent: 'a', round: 1, text: 'x' },
        { agent: 'b', round: 1, text: 'y' },
      ],
    };
    const { agents, winners } = judgeByRules(same, undefined, EXACT_ANSWERS, weights);
    expect(agents.map((a) => a.score)).toEqual([0, 0, 0]);
    expect(winners).toEqual(['a', 'b', 'c']);
  });
});

describe('judged debates: rewards and outcome', () => {
  test('rules, win: the winner 1, the loser 0; verifiable outcome: the winner is right', () => {
    const j = judgeDebate(transcript(), '42', judging('win'));
    expect(Object.fromEntries(j.rewards)).toEqual({ pro: 1, con: 0 });
    expect(j.outcome).toBe(1);
    const wrongRef = judgeDebate(transcript(), '41', judging('win'));
    // With 41 the reference, CON is right: CON (0.25+0.5+0.5+3)/6 beats PRO (0.5+0.75+1+0)/6, outcome 1.
    expect(wrongRef.winners).toEqual(['con']);
    expect(wrongRef.outcome).toBe(1);
  });

  test('rules, score: each debater its own score; a motion’s outcome is the winner’s score', () => {
    const j = judgeDebate(transcript(), undefined, judging('score'));
    expect(j.rewards.get('pro')).toBeCloseTo(0.75, 12);
    expect(j.rewards.get('con')).toBeCloseTo(1.25 / 3, 12);
    expect(j.outcome).toBeCloseTo(0.75, 12);
  });

  test('a tie splits the win', () => {
    const tie: DebateTranscript = {
      debaters: ['pro', 'con'],
      turns: [
        { agent: 'pro', round: 1, text: '\\boxed{3}' },
        { agent: 'con', round: 1, text: '\\boxed{4}' },
      ],
    };
    const j = judgeDebate(tie, undefined, judging('win'));
    expect(Object.fromEntries(j.rewards)).toEqual({ pro: 0.5, con: 0.5 });
    // With reference 5 both are wrong: still tied, and the outcome 0. With 3, PRO's correctness breaks the tie: outcome 1.
    expect(judgeDebate(tie, '5', judging('win'))).toMatchObject({ winners: ['pro', 'con'], outcome: 0 });
    expect(judgeDebate(tie, '3', judging('win'))).toMatchObject({ winners: ['pro'], outcome: 1 });
  });

  test("a judge model's verdict decides the winner; the judge is scored on its winner's answer", () => {
    const con = judgeDebate(transcript('<think>CON changed its mind</think><verdict>CON</verdict>'), '42', judging('win'));
    expect(Object.fromEntries(con.rewards)).toEqual({ pro: 0, con: 1, judge: 0 });
    expect(con.outcome).toBe(0);
    const pro = judgeDebate(transcript('<verdict> pro </verdict>'), '42', judging('score'));
    expect(Object.fromEntries(pro.rewards)).toEqual({ pro: 1, con: 0, judge: 1 });
    expect(pro.outcome).toBe(1);
    // On a motion the judge earns 1 for agreeing with the rule judge.
    expect(judgeDebate(transcript('<verdict>pro</verdict>'), undefined, judging('win')).rewards.get('judge')).toBe(1);
  });

  test('a bad verdict gives no winner: every reward 0, outcome 0', () => {
    const j = judgeDebate(transcript('PRO wins.'), '42', judging('win'));
    expect(j.verdict).toEqual({ valid: false, reason: 'missing <verdict>' });
    expect(Object.fromEntries(j.rewards)).toEqual({ pro: 0, con: 0, judge: 0 });
    expect(j.outcome).toBe(0);
  });
});

describe('parseVerdict (strict)', () => {
  const debaters = ['pro', 'con'];
  test.each([
    ['<verdict>pro</verdict>', { valid: true, winner: 'pro' }],
    ['<verdict>CON</verdict>', { valid: true, winner: 'con' }],
    ['<think>maybe <verdict>con</verdict></think> <verdict>pro</verdict>', { valid: true, winner: 'pro' }],
  ])('%s', (text, expected) => expect(parseVerdict(text, debaters)).toEqual(expected));
  test.each([
    ['PRO wins', 'missing <verdict>'],
    ['<verdict>alice</verdict>', 'is not one of pro, con'],
    ['<verdict>pro</verdict><verdict>con</verdict>', 'more than one <verdict>'],
    ['<verdict>pro', 'unbalanced <verdict> tags'],
    ['<verdict></verdict>', 'empty <verdict>'],
    ['<think>unclosed <verdict>pro</verdict>', 'unclosed <think>'],
  ])('%s is invalid', (text, reason) => {
    const verdict = parseVerdict(text, debaters);
    expect(verdict.valid).toBe(false);
    expect((verdict as { reason: string }).reason).toContain(reason);
  });
});
