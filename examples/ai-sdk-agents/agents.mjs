// Two agents written with the Vercel AI SDK alone (no drmas agent classes): a solver, then a verifier that checks the
// solver's solution; a rejected solution goes back to the solver once, with the verifier's words. drmas runs this
// function once per episode with a connection to its gateway (one capture session per episode) and trains both agents
// on the calls it recorded; the math environment grades the returned solution.
//
// The prompts are the math preset's (`Solve: {question}\n{team_context}`, `Check: ...`, earlier outputs as
// `The output of "<agent>": <text>` lines), which its base checkpoint was warmed up on, and the loop is its
// orchestra's (`orchestra.maxLoops: 2`: at most two solves, no verifier after the last).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';

const MAX_SOLVES = 2;

export default async function mathTeam(task, connection, { variables, seed }) {
  const provider = createOpenAICompatible({ name: 'drmas', ...connection });
  const team = [];
  const prompt = (head) => `${head}: ${variables.question}\n${team.join('\n\n')}`;
  let answer = '';
  for (let solves = 1; solves <= MAX_SOLVES; solves++) {
    const solve = await generateText({
      model: provider('solver'),
      prompt: prompt('Solve'),
      maxOutputTokens: 56,
      temperature: 1,
      seed: seed + 2 * solves,
    });
    answer = solve.text;
    team.push(`The output of "solver": ${answer}`);
    if (solves === MAX_SOLVES) break;
    const check = await generateText({
      model: provider('verifier'),
      prompt: prompt('Check'),
      maxOutputTokens: 72,
      temperature: 1,
      seed: seed + 2 * solves + 1,
      stopSequences: ['</verify>'],
    });
    // The stop string ends the text the SDK returns; the preset's transcripts keep it.
    const verdict = /<verify>\s*(approve|reject)\s*$/.exec(check.text)?.[1];
    team.push(`The output of "verifier": ${check.text}${/<verify>[^<]*$/.test(check.text) ? '</verify>' : ''}`);
    if (verdict === 'approve') break;
  }
  return answer;
}
