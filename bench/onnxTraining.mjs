// Training phase 1 (issue 19): forward + backward tokens/s of the onnx training graph vs the tfjs trainer, no
// optimizer step. usage: node bench/onnxTraining.mjs [--rounds N] [--models tiny,small] [--onnx-micro-batch N]
//   [--profile DIR]   (npm run bench:onnx-training)
// Rounds alternate the engines (so that load from other processes hits them alike); each measurement runs in its
// own child process (its peak RSS is its own). Prints JSON lines and a table, and writes the section
// "Training on onnxruntime (phase 1: forward and backward)" of bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { benchOptions, REPO_ROOT } from './lib/benchOptions.mjs';
import { median, TRAINING, trainingFlops } from './lib/workloads.mjs';
import { ONNX_TRAINING_SECTION, writeMeasuredSection } from './lib/resultsSections.mjs';

const root = REPO_ROOT;
const options = benchOptions({ 'onnx-micro-batch': { type: 'string', default: '8' }, profile: { type: 'string' } });
const { rounds, models } = options;
const onnxMicroBatch = options['onnx-micro-batch'];
const profileDir = options.profile;

const records = [];
function measure(engine, model) {
  const extra = engine === 'onnx' ? [onnxMicroBatch, ...(profileDir ? [profileDir] : [])] : [];
  const child = spawnSync(
    process.execPath,
    [
      '--conditions=drmas-source',
      '--no-warnings',
      '--import',
      './bench/lib/registerTypescript.mjs',
      'bench/engines/forwardBackward.mjs',
      engine,
      model,
      '1',
      ...extra,
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const line = (child.stdout ?? '').split('\n').find((l) => l.startsWith('{'));
  if (child.status !== 0 || !line) {
    console.error(`bench: ${engine} ${model} failed: ${(child.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
    return;
  }
  const record = JSON.parse(line);
  records.push(record);
  console.log(JSON.stringify(record));
}

const loadAtStart = loadavg().map((x) => +x.toFixed(2));
for (let r = 0; r < rounds; r++) for (const model of models) for (const engine of ['onnx', 'tfjs']) measure(engine, model);
const loadAtEnd = loadavg().map((x) => +x.toFixed(2));

const rows = [];
for (const model of models) {
  const pick = (engine) => records.filter((r) => r.engine === engine && r.model === model);
  const tfjs = pick('tfjs');
  const tfjsTps = tfjs.length ? median(tfjs.map((r) => r.tokensPerSecond)) : undefined;
  for (const engine of ['onnx', 'tfjs']) {
    const found = pick(engine);
    if (found.length === 0) continue;
    const seconds = median(found.map((r) => r.seconds));
    const tps = median(found.map((r) => r.tokensPerSecond));
    rows.push({
      model,
      engine,
      runtime: found[0].runtime,
      microBatchSize: found[0].microBatchSize,
      seconds,
      tokensPerSecond: tps,
      ratioToTfjs: tfjsTps ? tps / tfjsTps : undefined,
      // trainingFlops counts forward + backward (3x the forward's matmul FLOPs).
      gflops: trainingFlops(model) / seconds / 1e9,
      peakRssMiB: Math.max(...found.map((r) => r.peakRssMiB)),
      runs: found.length,
    });
  }
}

const fmt = (v, digits = 0) => (v === undefined ? '-' : v.toFixed(digits));
const table = [
  '| model | engine | runtime | micro-batch | seconds (median) | tokens/s | x tfjs | GFLOP/s | peak RSS (MiB) | runs |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.model} | ${r.engine} | ${r.runtime} | ${r.microBatchSize} | ${fmt(r.seconds, 2)} | ${fmt(r.tokensPerSecond)} | ` +
      `${fmt(r.ratioToTfjs, 2)} | ${fmt(r.gflops, 1)} | ${fmt(r.peakRssMiB)} | ${r.runs} |`,
  ),
];
console.log(table.join('\n'));

const measured = [
  `Measured by \`npm run bench:onnx-training\` (${rounds} alternating rounds, ${availableParallelism()} cores, load average`,
  `${loadAtStart.join(' / ')} at start, ${loadAtEnd.join(' / ')} at end): forward + backward of batch ${TRAINING.rows} x`,
  `${TRAINING.promptTokens + TRAINING.responseTokens} tokens (${TRAINING.promptTokens} prompt + ${TRAINING.responseTokens} response) with the benchmark's`,
  'policy-gradient loss, gradients of every weight accumulated over the micro-batches; no clipping, no optimizer step.',
  'The median of the runs, each in its own process after one warm-up run.',
  '',
  ...table,
];
const heading = '## Training on onnxruntime (phase 1: forward and backward)';
writeMeasuredSection(ONNX_TRAINING_SECTION, heading, measured, 'the onnx training figures');
