// drmas benchmark: generation and training throughput of every engine available, against PyTorch in its fastest
// setting on this machine.
// usage: node bench/run.mjs [--rounds N] [--models tiny,small] [--micro-batch N] [--tfjs-train-rounds N]
//   [--torch-grid full|kernels] [--torch-grid-rounds N] [--workloads train,generate] [--rl-proxy] [--from-log FILE,...]
//   (npm run bench -- ...)
// PyTorch first runs a grid of BLAS and thread settings (bench/lib/torchSettings.mjs) on a matmul, one training
// round and one generation run of tiny; each workload then uses its fastest setting. Training and generation run in
// rounds that alternate the engines. Each measurement runs in its own child process (so its peak RSS is its own);
// prints one JSON line per measurement and writes bench/RESULTS.md. `--from-log` measures nothing: it writes
// RESULTS.md from the stdout and stderr of an earlier run (one stopped before its end, for instance).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, benchOptions, REPO_ROOT } from './lib/benchOptions.mjs';
import { generationFlops, median, trainingFlops } from './lib/workloads.mjs';
import { renderResults } from './lib/report.mjs';
import { keptSections } from './lib/resultsSections.mjs';
import { fastestSetting, settingEnv, torchSettings } from './lib/torchSettings.mjs';
import { pythonOfEnv } from './lib/pythonEnvs.mjs';

const here = BENCH_DIR;
const root = REPO_ROOT;
const options = benchOptions({
  'micro-batch': { type: 'string', default: '8' },
  'tfjs-train-rounds': { type: 'string', default: '1' },
  'torch-grid': { type: 'string', default: 'full' },
  'torch-grid-rounds': { type: 'string', default: '1' },
  workloads: { type: 'string', default: 'train,generate' },
  'rl-proxy': { type: 'boolean' },
  'from-log': { type: 'string' },
});
const fromLog = options['from-log'];
const { rounds, models } = options;
const microBatch = options['micro-batch'];
const tfjsTrainRounds = Number(options['tfjs-train-rounds']);
const gridRounds = Number(options['torch-grid-rounds']);
const workloads = new Set(String(options.workloads).split(','));
const PYTHON = '/usr/bin/python3';
const TORCH_INSTALL =
  'sudo bash scripts/install-test-deps.sh torch (python3-torch, libopenblas0-pthread); libopenblas0-openmp for its grid row';

const records = [];
const notices = [];

function run(label, command, commandArgs, env = {}, extra = {}) {
  const started = performance.now();
  const childEnv = { ...process.env, ...env };
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key];
  const child = spawnSync(command, commandArgs, { cwd: root, encoding: 'utf8', env: childEnv, maxBuffer: 1 << 26 });
  const lines = (child.stdout ?? '').split('\n').filter((l) => l.startsWith('{'));
  if (child.status !== 0 || lines.length === 0) {
    const why = (child.stderr || child.error?.message || '').trim().split('\n').slice(-3).join(' | ');
    // A child killed by a signal (SIGKILL: the kernel's OOM killer, on a machine short of memory) writes nothing.
    const exit = child.signal ? `killed by ${child.signal}${child.signal === 'SIGKILL' ? ', out of memory?' : ''}` : `exit ${child.status}`;
    notices.push(`${label} failed (${exit}): ${why}`);
    console.error(`bench: ${label} failed (${exit}): ${why}`);
    return [];
  }
  const loadAverage = loadavg().map((x) => +x.toFixed(2));
  const parsed = lines.map((l) => ({ ...JSON.parse(l), ...extra, wallSeconds: (performance.now() - started) / 1000, loadAverage }));
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

const torchVersionOf = (python) => {
  const probe = spawnSync(python, ['-c', 'import torch, numpy; print(torch.__version__)'], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
};
const debianTorch = torchVersionOf(PYTHON);
// PyPI's torch 2.x, from the trl environment (scripts/python-env.sh trl), is a candidate reference beside Debian's.
const pypiPython = pythonOfEnv('trl');
const pypiTorch = pypiPython && torchVersionOf(pypiPython);
const torchVersion = [debianTorch && `${debianTorch} (Debian)`, pypiTorch && `${pypiTorch} (PyPI)`].filter(Boolean).join(', ') || undefined;
if (!torchVersion) {
  const notice = `PyTorch column skipped: ${PYTHON} has no torch and the trl environment is not installed. Install Debian's: ${TORCH_INSTALL}; PyPI's: bash scripts/python-env.sh trl`;
  notices.push(notice);
  console.error(`bench: ${notice}`);
}
const torch = (label, setting, benchArgs) =>
  torchVersion
    ? run(
        label,
        setting.python ?? PYTHON,
        [
          'bench/pytorch/reference_decoder.py',
          ...benchArgs,
          '--threads',
          String(setting.intraOpThreads),
          ...(setting.dtype ? ['--dtype', setting.dtype] : []),
        ],
        settingEnv(setting),
        {
          setting: setting.label,
        },
      )
    : [];

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
  inheritedOpenblasCoretype: process.env.OPENBLAS_CORETYPE ?? 'unset',
  loadAverageAtStart: loadavg().map((x) => +x.toFixed(2)),
};
console.error(`bench: ${JSON.stringify(machine)}`);

const settings = torchSettings(availableParallelism(), options['torch-grid'], {
  debian: Boolean(debianTorch),
  pypiPython: pypiTorch && pypiPython,
});
if (fromLog) readLog(fromLog);
// PyTorch's settings grid: each setting in its own process (OpenBLAS reads its environment when it loads).
else if (torchVersion) {
  for (const missing of settings.unavailable) notices.push(missing);
  for (let r = 0; r < gridRounds; r++) {
    for (const setting of settings.available)
      torch(`pytorch probe ${setting.label}`, setting, ['probe', 'tiny', '--repeats', '1', '--micro-batch', microBatch]);
  }
}
const probes = records.filter((r) => r.bench?.startsWith('probe-'));
const debianWithout = probes.find((p) => p.blas !== 'OpenBLAS' && !p.setting.startsWith('PyPI'));
if (debianWithout) notices.push(`Debian's PyTorch ran on ${debianWithout.blas} in some settings: install OpenBLAS (${TORCH_INSTALL})`);
const settingsMeasured = settings.available.filter((s) => probes.some((p) => p.setting === s.label));
const fastest = {
  train: fastestSetting(settingsMeasured, probes, 'probe-train', 'tokensPerSecond'),
  generate: fastestSetting(settingsMeasured, probes, 'probe-generate', 'tokensPerSecond'),
  matmul: fastestSetting(settingsMeasured, probes, 'probe-matmul', 'gflops'),
};
if (torchVersion)
  console.error(
    `bench: fastest PyTorch settings: ${JSON.stringify(Object.fromEntries(Object.entries(fastest).map(([k, s]) => [k, s?.label])))}`,
  );
const torchFor = (workload) => fastest[workload] ?? settings.available[0];

// Rounds rotate the engines' order, so that load from other processes hits them alike.
const rotate = (list, r) => list.map((_, i) => list[(i + r) % list.length]);

if (!fromLog) measureWorkloads();

machine.loadAverageAtEnd ??= records.at(-1)?.loadAverage;
const summary = summarize();
const grid = settingsMeasured.map((s) => gridRow(s));
writeFileSync(
  join(here, 'RESULTS.md'),
  renderResults({ machine, records, summary, notices, rounds, grid, fastest, microBatch, tfjsTrainRounds, gridRounds, fromLog }) +
    keptSectionsOfResults(),
);
console.error('bench: wrote bench/RESULTS.md');

function measureWorkloads() {
  // Training: every engine's full update (forward, loss, backward per micro-batch, clipping, AdamW) on 32 x 256 tokens.
  for (let r = 0; r < (workloads.has('train') ? rounds : 0); r++) {
    for (const model of models) {
      const steps = [
        () => node(`onnx train ${model}`, 'onnxEngine.mjs', ['train', model, '1', microBatch]),
        () => torch(`pytorch train ${model}`, torchFor('train'), ['train', model, '--repeats', '1', '--micro-batch', microBatch]),
      ];
      // tfjs: wasm's 32-bit heap cannot hold micro-batches of 8 x 256 tokens of small (2 there).
      if (r < tfjsTrainRounds)
        steps.push(() => node(`tfjs train ${model}`, 'tfjsEngine.mjs', ['train', model, '1', model === 'small' ? '2' : microBatch]));
      for (const step of rotate(steps, r)) step();
    }
  }

  // Matmul ceilings.
  node('onnx matmul', 'onnxEngine.mjs', ['matmul']);
  node('tfjs matmul', 'tfjsEngine.mjs', ['matmul']);
  torch('pytorch matmul', torchFor('matmul'), ['matmul', '--repeats', '5']);

  // Generation.
  for (let r = 0; r < (workloads.has('generate') ? rounds : 0); r++) {
    for (const model of models) {
      const steps = [
        () => node(`onnx generate ${model}`, 'onnxEngine.mjs', ['generate', model, 'inputs', '1']),
        () => torch(`pytorch generate ${model}`, torchFor('generate'), ['generate', model, '--repeats', '1']),
        () => node(`tfjs generate ${model}`, 'tfjsEngine.mjs', ['generate', model, '1']),
      ];
      for (const step of rotate(steps, r)) step();
    }
  }

  // Weight sync: weights as graph inputs (the default) vs initializers (the session is rebuilt on sync).
  if (workloads.has('generate'))
    for (const mode of ['inputs', 'initializers']) node(`onnx sync small ${mode}`, 'onnxEngine.mjs', ['sync', 'small', mode, '3']);

  // Proxy of an RL step with a tfjs trainer (before the onnx trainer; the main job itself: npm run bench:main-job).
  if (options['rl-proxy']) {
    for (const rollout of ['tfjs', 'onnx']) node(`rl proxy tiny ${rollout}`, 'rlProxy.mjs', ['tiny', rollout, '3']);
  }
  machine.loadAverageAtEnd = loadavg().map((x) => +x.toFixed(2));
}

/**
 * Takes the measurements (JSON lines) and the machine (the first `bench: {...}` line) from earlier runs' stdout and
 * stderr, comma-separated paths (several runs' merge: their medians pool the rounds).
 */
function readLog(paths) {
  for (const path of paths.split(',')) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const json = line.match(/^(?:bench: )?(\{.*\})$/)?.[1];
      if (!json) continue;
      const value = JSON.parse(json);
      if (value.engine) records.push(value);
      // The first run's machine line: its load average at start is the merged runs' start.
      else if (value.cpu && value.cores && !machine.fromLog) Object.assign(machine, value, { fromLog: true });
    }
  }
}

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

function gridRow(setting) {
  const of = (bench, key) => {
    const found = probes.filter((p) => p.setting === setting.label && p.bench === bench);
    return found.length ? median(found.map((p) => p[key])) : undefined;
  };
  const core = probes.find((p) => p.setting === setting.label)?.openblasCore;
  return {
    label: setting.label,
    core,
    matmulGflops: of('probe-matmul', 'gflops'),
    trainTokensPerSecond: of('probe-train', 'tokensPerSecond'),
    generateTokensPerSecond: of('probe-generate', 'tokensPerSecond'),
  };
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
      const refCpu = reference.length && reference[0].cpuSeconds !== undefined ? median(reference.map((r) => r.cpuSeconds)) : undefined;
      for (const engine of ['onnx', 'tfjs', 'pytorch']) {
        const found = pick(engine, bench, model).filter((r) => !r.weightMode || r.weightMode === 'inputs');
        if (found.length === 0) continue;
        const tps = median(found.map((r) => r.tokensPerSecond));
        const seconds = median(found.map((r) => r.seconds));
        const cpuSeconds = found[0].cpuSeconds === undefined ? undefined : median(found.map((r) => r.cpuSeconds));
        rows.push({
          bench,
          model,
          engine,
          runtime: found[0].runtime,
          microBatchSize: found[0].microBatchSize,
          samples: found.length * (found[0].repeats ?? 1),
          tokensPerSecond: tps,
          ratioToPytorch: refTps ? tps / refTps : undefined,
          cpuSeconds,
          // Tokens per CPU-second against PyTorch's: less moved by other processes' load than wall time (but a second
          // thread that halves the wall time shows as no gain here).
          cpuRatioToPytorch: refCpu && cpuSeconds ? refCpu / cpuSeconds : undefined,
          gflops: flops / seconds / 1e9,
          ceilingGflops: ceiling[engine],
          peakRssMiB: Math.max(...found.map((r) => r.peakRssMiB)),
          each: found.map((r) => r.tokensPerSecond),
        });
      }
    }
  }
  return rows;
}
