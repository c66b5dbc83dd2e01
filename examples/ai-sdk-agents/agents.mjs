// Two agents written with the Vercel AI SDK alone (no drmas agent classes): a solver, then a verifier that reads the
// solver's solution. drmas runs this function once per episode with a connection to its gateway (one capture session
// per episode) and trains both agents on the calls it recorded; the math environment grades the returned solution.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';

export default async function mathTeam(task, connection, { variables, seed }) {
  const provider = createOpenAICompatible({ name: 'drmas', ...connection });
  const solve = await generateText({
    model: provider('solver'),
    prompt: `Solve: ${variables.question}\n`,
    maxOutputTokens: 56,
    temperature: 1,
    seed,
  });
  await generateText({
    model: provider('verifier'),
    prompt: `Check: ${variables.question}\nThe output of "solver": ${solve.text}`,
    maxOutputTokens: 72,
    temperature: 1,
    seed: seed + 1,
    stopSequences: ['</verify>'],
  });
  return solve.text;
}
