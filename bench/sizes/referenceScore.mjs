// A reference model's work per step on a model folder: load it as the trainer loads a reference (float32 or float16
// weights), then score ROWS rows of PROMPT_TOKENS + RESPONSE_TOKENS fixed tokens, twice (the first builds the
// session). Prints one JSON line per phase (phases.mjs); the high-water mark is reset after loading
// (/proc/self/clear_refs), so the scoring lines' `hwm` is the peak while scoring alone. `weightBytes`: what the engine
// holds. Run it with --expose-gc for the resident set after loading without the loader's garbage.
//
//   node --expose-gc bench/sizes/referenceScore.mjs MODEL_DIR float32|float16 ROWS PROMPT_TOKENS RESPONSE_TOKENS
import { writeFileSync } from 'node:fs';
import { mark } from './phases.mjs';
import { createOnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { TrainingBatch } from '@drmas/core';

const [model, weightPrecision, rowsArg, promptArg, responseArg] = process.argv.slice(2);
if (!model || !responseArg || !['float32', 'float16'].includes(weightPrecision)) {
  console.error('usage: node --expose-gc bench/sizes/referenceScore.mjs MODEL_DIR float32|float16 ROWS PROMPT_TOKENS RESPONSE_TOKENS');
  process.exit(2);
}
const [rows, promptTokens, responseTokens] = [rowsArg, promptArg, responseArg].map(Number);

mark('start');
const engine = await createOnnxPolicyBackend({ model, provider: 'cpu', weightPrecision });
// The loader's float32 arrays (converted to float16, or adopted) are garbage now; let V8 free their backing stores.
for (let i = 0; i < 3; i++) {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
}
mark('engine loaded', { weightPrecision: engine.weightPrecision, weightLayout: engine.weightLayout, weightBytes: engine.weightBytes });
writeFileSync('/proc/self/clear_refs', '5');
const V = engine.vocabSize;
const tokens = (r, n, salt) => Int32Array.from({ length: n }, (_, j) => (r * 31 + j * 17 + salt) % V);
const batch = TrainingBatch.fromSequences(
  Array.from({ length: rows }, (_, r) => tokens(r, promptTokens, 1)),
  Array.from({ length: rows }, (_, r) => tokens(r, responseTokens, 7)),
);
for (const label of ['scored (first: builds the session)', 'scored (again)']) {
  const { logProbs } = await engine.score({ batch: batch.all() });
  const sum = logProbs.reduce((s, x) => s + x, 0);
  mark(label, { meanLogProb: +(sum / logProbs.length).toFixed(6) });
}
engine.dispose();
