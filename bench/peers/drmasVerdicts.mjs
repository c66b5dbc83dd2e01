// drmas's own verdicts on responses, from the built packages' public API: the math environment's episode judge
// (scoreMathResponse and, with checkSteps, checkArithmeticClaims) and the check of a Solver turn
// (parseTaggedOutput with tag `boxed`). bench/peers/math_reward.py is checked against these
// (test/interop/peersMathReward.test.ts).
// usage: node bench/peers/drmasVerdicts.mjs FILE.jsonl   ({"response", "answer", "split"} lines; one verdict per line)
import { readFileSync } from 'node:fs';
import { checkArithmeticClaims, MathEpisode, scoreMathResponse } from '@drmas/plugin-env-math';
import { parseTaggedOutput } from '@drmas/core';
import { MATH_DEFAULTS } from '@drmas/preset-math';

const INVALID_PENALTY = MATH_DEFAULTS.agents.solver.invalidPenalty;
const CHECK_STEPS = MATH_DEFAULTS.env.checkSteps;

const out = [];
for (const line of readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const { response, answer, split = 'train' } = JSON.parse(line);
  const score = scoreMathResponse(response, answer);
  const episode = new MathEpisode({ id: 'case', question: '', answer, dataSource: 'bench', split }, CHECK_STEPS);
  const outcome = episode.judge({ type: 'answer', content: response, agentId: 'solver', turnIndex: 0 });
  const valid = parseTaggedOutput(response, { tag: 'boxed' }).valid;
  out.push(
    JSON.stringify({
      correct: score.correct,
      extracted: score.extracted ?? null,
      reason: score.reason,
      falseClaims: checkArithmeticClaims(response).false,
      valid,
      reward: outcome - (valid ? 0 : INVALID_PENALTY),
    }),
  );
}
process.stdout.write(`${out.join('\n')}\n`);
