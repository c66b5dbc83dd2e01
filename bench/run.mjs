// drmas benchmark: generation and training throughput of every engine available, against a PyTorch reference.
// usage: node bench/run.mjs [--rounds N] [--models tiny,small] [--skip-rl]   (npm run bench)
// Each measurement runs in its own child process (so its peak RSS is its own); prints one JSON line per
// measurement and writes bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, benchOptions, REPO_ROOT } from './lib/benchOptions.mjs';
import { generationFlops, median, trainingFlops } from './lib/workloads.mjs';
import { renderResults } from './lib/report.mjs';
import { keptSections } from './lib/resultsSections.mjs';

const here = BENCH_DIR;
const root = REPO_ROOT;
const options = benchOptions({ 'skip-rl': { type: 'boolean' } });
const { rounds, models } = options;
const PYTHON = '/usr/bin/python3';
const TORCH_INSTALL = 'sudo apt-get install python3-torch libopenblas0-pthread  (then /usr/bin/python3 has torch)';

const records = [];
const notices = [];

function run(label, command, commandArgs, env = {}) {
  const started = performance.now();
  const child = spawnSync(command, commandArgs, { cwd: root, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  const lines = (child.stdout ?? '').split('\n').filter((l) => l.startsWith('{'));
  if (child.status !== 0 || lines.length === 0) {
    const why = (child.stderr || child.error?.message || '').trim().split('\n').slice(-3).join(' | ');
    notices.push(`${label} failed (exit ${child.status}): ${why}`);
    console.error(`bench: ${label} failed: ${why}`);
    return [];
  }
  const parsed = lines.map((l) => ({ ...JSON.parse(l), wallSeconds: (performance.now() - started) / 1000 }));
  for (const r of parsed) {
    records.push(r);
    console.log(JSON.stringify(r));
  }
  return parsed;
}

const node = (label, script, scriptArgs) =>
  run(label, process.execPath, [
    '--conditions=drmas-source',
    '--no-warnings',
    '--import',
    './bench/lib/registerTypescript.mjs',
    `bench/engines/${script}`,
    ...scriptArgs,
  ]);

// PyTorch runs with 1 intra-op thread and OpenBLAS on all cores: on this 2-core machine, torch's OpenMP threads
// and OpenBLAS's pthreads together oversubscribe the cores (measured 5x slower); this is its fastest setting here.
const torchEnv = { OPENBLAS_NUM_THREADS: String(availableParallelism()) };
const torchProbe = spawnSync(PYTHON, ['-c', 'import torch, numpy; print(torch.__version__)'], { encoding: 'utf8' });
const torchVersion = torchProbe.status === 0 ? torchProbe.stdout.trim() : undefined;
if (!torchVersion) {
  const notice = `PyTorch column skipped: ${PYTHON} has no torch. Install Debian's: ${TORCH_INSTALL}`;
  notices.push(notice);
  console.error(`bench: ${notice}`);
}
const torch = (label, benchArgs) =>
  torchVersion ? run(label, PYTHON, ['bench/pytorch/reference_decoder.py', ...benchArgs, '--threads', '1'], torchEnv) : [];

const version = (pkg) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const cpuModel = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? 'unknown';
const machine = {
  cpu: cpuModel,
  cores: availableParallelism(),
  memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
  node: process.version,
  onnxruntime: version('onnxruntime-node'),
  tfjs: version('@tensorflow/tfjs-core'),
  torch: torchVersion ?? 'absent',
  loadAverageAtStart: loadavg().map((x) => +x.toFixed(2)),
};
console.error(`bench: ${JSON.stringify(machine)}`);

// Matmul ceilings.
node('onnx matmul', 'onnxEngine.mjs', ['matmul']);
node('tfjs matmul', 'tfjsEngine.mjs', ['matmul']);
torch('pytorch matmul', ['matmul', '--repeats', '5']);

// Generation: rounds alternate engines, so that load from other processes hits them alike.
for (let r = 0; r < rounds; r++) {
  for (const model of models) {
    node(`onnx generate ${model}`, 'onnxEngine.mjs', ['generate', model, 'inputs', '1']);
    torch(`pytorch generate ${model}`, ['generate', model, '--repeats', '1']);
    node(`tfjs generate ${model}`, 'tfjsEngine.mjs', ['generate', model, '1']);
  }
}

// Weight sync: weights as graph inputs (the default) vs initializers (the session is rebuilt on sync).
for (const mode of ['inputs', 'initializers']) node(`onnx sync small ${mode}`, 'onnxEngine.mjs', ['sync', 'small', mode, '3']);

// Training.
for (const model of models) {
  node(`tfjs train ${model}`, 'tfjsEngine.mjs', ['train', model, model === 'small' ? '1' : '3']);
  torch(`pytorch train ${model}`, ['train', model, '--repeats', '3']);
}

// Proxy of the math preset's RL step: rollout on tfjs vs on onnx + syncWeights.
if (!options['skip-rl']) {
  for (const rollout of ['tfjs', 'onnx']) node(`rl proxy tiny ${rollout}`, 'rlProxy.mjs', ['tiny', rollout, '3']);
}

machine.loadAverageAtEnd = loadavg().map((x) => +x.toFixed(2));
const summary = summarize();
writeFileSync(join(here, 'RESULTS.md'), renderResults({ machine, records, summary, notices, rounds }) + keptSectionsOfResults());
console.error('bench: wrote bench/RESULTS.md');

/** The sections other bench scripts wrote into RESULTS.md, kept as they are. */
function keptSectionsOfResults() {
  let previous;
  try {
    previous = readFileSync(join(here, 'RESULTS.md'), 'utf8');
  } catch {
    return '';
  }
  return keptSections(previous)
    .map((block) => `\n${block}\n`)
    .join('');
}

function summarize() {
  const pick = (engine, bench, model) => records.filter((r) => r.engine === engine && r.bench === bench && r.model === model);
  const ceiling = Object.fromEntries(
    ['onnx', 'tfjs', 'pytorch'].map((e) => [e, records.find((r) => r.engine === e && r.bench === 'matmul')?.gflops]),
  );
  const rows = [];
  for (const bench of ['generate', 'train']) {
    for (const model of models) {
      const flops = bench === 'generate' ? generationFlops(model) : trainingFlops(model);
      const reference = pick('pytorch', bench, model);
      const refTps = reference.length ? median(reference.map((r) => r.tokensPerSecond)) : undefined;
      for (const engine of ['onnx', 'tfjs', 'pytorch']) {
        const found = pick(engine, bench, model).filter((r) => !r.weightMode || r.weightMode === 'inputs');
        if (found.length === 0) continue;
        const tps = median(found.map((r) => r.tokensPerSecond));
        const seconds = median(found.map((r) => r.seconds));
        const gflops = flops / seconds / 1e9;
        rows.push({
          bench,
          model,
          engine,
          runtime: found[0].runtime,
          samples: found.length * (found[0].repeats ?? 1),
          tokensPerSecond: tps,
          ratioToPytorch: refTps ? tps / refTps : undefined,
          gflops,
          ceilingGflops: ceiling[engine],
          peakRssMiB: Math.max(...found.map((r) => r.peakRssMiB)),
        });
      }
    }
  }
  return rows;
}
