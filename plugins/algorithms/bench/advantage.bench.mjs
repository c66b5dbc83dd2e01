// Median timings of drmas advantages for 1,000,000 tokens in 10,000 rows.
// Build first: npx tsc -p plugins/algorithms/tsconfig.json; then: node plugins/algorithms/bench/advantage.bench.mjs
import { ADVANTAGE_ESTIMATORS, computeAdvantage, computeAdvantageColumnar } from '../dist/index.js';

const ROWS = 10_000;
const COLS = 100;
const RUNS = 15;

const tokenRewards = new Float32Array(ROWS * COLS);
const responseMask = new Float32Array(ROWS * COLS);
const groupCodes = new Int32Array(ROWS);
const agentCodes = new Int32Array(ROWS);
let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
for (let r = 0; r < ROWS; r++) {
  const len = 1 + Math.floor(rand() * COLS);
  for (let t = 0; t < len; t++) responseMask[r * COLS + t] = 1;
  tokenRewards[r * COLS + len - 1] = rand() < 0.5 ? 1 : 0;
  groupCodes[r] = Math.floor(r / 16);
  agentCodes[r] = r % 3;
}
const columnar = { rowLength: COLS, tokenRewards, responseMask, groupCodes, agentCodes };

const nested = {
  tokenRewards: Array.from({ length: ROWS }, (_, r) => Array.from(tokenRewards.subarray(r * COLS, (r + 1) * COLS))),
  responseMask: Array.from({ length: ROWS }, (_, r) => Array.from(responseMask.subarray(r * COLS, (r + 1) * COLS))),
  groupIds: Array.from(groupCodes, (g) => `prompt-${g}`),
  agentIds: Array.from(agentCodes, (a) => `agent-${a}`),
};

function median(f) {
  for (let i = 0; i < 3; i++) f();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const col = median(() => computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.drmas, columnar));
const arr = median(() => computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, nested));
console.log(`drmas, ${ROWS} rows x ${COLS} tokens (${ROWS * COLS} tokens), median of ${RUNS}:`);
console.log(`  columnar (Float32Array + Int32Array codes): ${col.toFixed(2)} ms`);
console.log(`  number[][] + string ids:                    ${arr.toFixed(2)} ms`);
