// Median timings of drmas advantages for 1,000,000 tokens in 10,000 rows: on a view of a step's batch (what a
// training step runs, written in place) and through computeAdvantage's number[][] input.
// Build first: npx tsc -b; then: node plugins/algorithms/bench/advantage.bench.mjs
import { TrainingBatch } from '@drmas/core';
import { ADVANTAGE_ESTIMATORS, computeAdvantage, estimateView } from '../dist/index.js';

const ROWS = 10_000;
const COLS = 100;
const RUNS = 15;

let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
const turns = Array.from({ length: ROWS }, (_, r) => {
  const length = r === 0 ? COLS : 1 + Math.floor(rand() * COLS);
  return {
    groupId: `prompt-${Math.floor(r / 16)}`,
    trajectoryId: `t${r}`,
    agentId: `agent-${r % 3}`,
    workerGroupId: 'policy',
    step: 0,
    index: 0,
    promptIds: [1],
    responseIds: new Array(length).fill(4),
    logProbs: new Array(length).fill(-1),
    reward: rand() < 0.5 ? 1 : 0,
    valid: true,
  };
});
const batch = TrainingBatch.fromTurns(turns);
const R = batch.responseLength;
const matrix = (flat) => Array.from({ length: ROWS }, (_, r) => Array.from(flat.subarray(r * R, (r + 1) * R)));
const nested = {
  tokenRewards: matrix(batch.tokenRewards),
  responseMask: matrix(batch.responseMask),
  groupIds: turns.map((t) => t.groupId),
  agentIds: turns.map((t) => t.agentId),
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

const all = batch.all();
const view = median(() => estimateView(ADVANTAGE_ESTIMATORS.drmas, all));
const arr = median(() => computeAdvantage('drmas', nested));
console.log(`drmas, ${ROWS} rows x ${R} tokens (${ROWS * R} tokens), median of ${RUNS}:`);
console.log(`  batch view (the step's columns, in place): ${view.toFixed(2)} ms`);
console.log(`  number[][] + string ids:                   ${arr.toFixed(2)} ms`);
