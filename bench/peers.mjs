// The peer benchmark: one GRPO job on drmas and on Hugging Face TRL's GRPOTrainer, with the same model, prompts,
// reward, group size, prompts per step, new-token limit, temperature, learning rates, loss aggregation and one
// optimizer step per batch; and the math preset's Solver-Verifier loop both ways (the multi-agent row).
// usage: node bench/peers.mjs [--models tiny,small,qwen2.5-0.5b] [--steps N] [--seeds 0,1,2] [--rounds N] [--jobs grpo,solver-verifier]
//   [--trl-setting THREADSxPRECISION[-nogc] | --trl-grid] [--quiet-load 2.5] [--wait-quiet SECONDS] [--records FILE] [--no-write]
//   (npm run bench:peers -- ...; the smoke run: --models tiny --steps 2 --seeds 0 --rounds 1 --trl-setting 2xfp32-nogc)
// Each run is its own child process (its peak RSS its own): `drmas train` with the job's config and defaults, and
// bench/peers/trl_*.py under the trl environment's python (scripts/python-env.sh trl). Rounds alternate which
// framework goes first. Per optimizer step both sides record the wall time and its split (generation, scoring,
// reward, update, the rest), tokens and the mean reward; the section "Peer benchmark" of bench/RESULTS.md gets the
// medians, the reward curves per seed and every record. A round started while the 1-minute load average is at or
// above --quiet-load is marked and left out of the figures while quiet rounds exist.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_DIR, REPO_ROOT } from './lib/benchOptions.mjs';
import { pythonOfEnv } from './lib/pythonEnvs.mjs';
import { replaceWholeSection } from './lib/resultsSections.mjs';
import { peerSettings } from './peers/drmasSettings.mjs';
import { exportModel, exportTasks, PEER_MODELS, runOverrides } from './peers/exportTasks.mjs';
import { renderPeers, PEERS_SECTION } from './peers/report.mjs';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'tiny,small' },
    steps: { type: 'string', default: '20' },
    seeds: { type: 'string', default: '0,1,2' },
    rounds: { type: 'string', default: '1' },
    jobs: { type: 'string', default: 'grpo,solver-verifier' },
    'trl-setting': { type: 'string' },
    'trl-grid': { type: 'boolean' },
    'quiet-load': { type: 'string', default: '2.5' },
    'wait-quiet': { type: 'string', default: '0' },
    records: { type: 'string' },
    'no-write': { type: 'boolean' },
    work: { type: 'string', default: join(REPO_ROOT, 'runs', 'bench-peers') },
  },
  strict: true,
});
const models = values.models.split(',');
const steps = Number(values.steps);
const seeds = values.seeds.split(',').map(Number);
const rounds = Number(values.rounds);
const quietLoad = Number(values['quiet-load']);
const load = () => loadavg().map((x) => +x.toFixed(2));

/** The jobs: a drmas config in bench/peers/ and the TRL script written for it. */
const JOBS = {
  grpo: { config: 'bench/peers/grpo.json', trl: 'bench/peers/trl_grpo.py', what: 'single-agent GRPO (the Solver alone)' },
  'solver-verifier': {
    config: 'bench/peers/solver-verifier.json',
    trl: 'bench/peers/trl_solver_verifier.py',
    what: "the math preset's Solver-Verifier loop (Dr. MAS advantages on drmas)",
  },
};
const jobs = values.jobs.split(',').map((name) => {
  if (!JOBS[name]) throw new Error(`bench/peers: no job "${name}" (known: ${Object.keys(JOBS).join(', ')})`);
  return { name, ...JOBS[name] };
});
for (const model of models)
  if (!PEER_MODELS[model]) throw new Error(`bench/peers: no model "${model}" (known: ${Object.keys(PEER_MODELS).join(', ')})`);

const records = [];
const notices = [];
const startLoad = load();

function record(r) {
  records.push(r);
  console.log(JSON.stringify(r));
}

/** The trl environment's python (scripts/python-env.sh trl). */
function trlPython() {
  const python = pythonOfEnv('trl');
  if (!python) notices.push('TRL not measured: its Python environment is not installed (bash scripts/python-env.sh trl).');
  return python;
}

function child(label, command, args) {
  const started = performance.now();
  const run = spawnSync(command, args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, TRL_EXPERIMENTAL_SILENCE: '1' },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  if (run.status !== 0) {
    const why = (run.stderr || run.error?.message || '').trim().split('\n').slice(-3).join(' | ');
    const exit = run.signal ? `killed by ${run.signal}${run.signal === 'SIGKILL' ? ', out of memory?' : ''}` : `exit ${run.status}`;
    notices.push(`${label} failed (${exit}): ${why}`);
    console.error(`bench/peers: ${label} failed (${exit}): ${why}`);
    return undefined;
  }
  return { stdout: run.stdout, wallSeconds };
}

/** Exports (once) the model, the tasks and drmas's settings of one model, seed and job. */
async function inputs(model, seed, job) {
  const dir = join(values.work, `${model}-seed${seed}`);
  mkdirSync(dir, { recursive: true });
  const modelDir = await exportModel(model, dir, seed);
  const overrides = [...runOverrides(model, modelDir, seed), `trainer.steps=${steps}`];
  const tasksFile = join(dir, `tasks-${steps}.jsonl`);
  const tasks = await exportTasks({ config: job.config, overrides, steps, modelDir });
  writeFileSync(tasksFile, tasks.map((t) => JSON.stringify(t)).join('\n') + '\n');
  const settingsFile = join(dir, `${job.name}-settings.json`);
  writeFileSync(settingsFile, JSON.stringify(await peerSettings(job.config, overrides)));
  return { modelDir, tasks, tasksFile, settingsFile, overrides };
}

/** One `drmas train` of the job: its step records from metrics.jsonl, and whether its prompts were the exported ones. */
function drmasRun(job, model, seed, input, extra) {
  const runDir = mkdtempSync(join(tmpdir(), 'drmas-bench-peers-'));
  try {
    const args = ['core/bin/drmas.js', 'train', '--config', job.config, '--run-dir', runDir];
    for (const o of input.overrides) args.push('--set', o);
    const run = child(`drmas ${job.name} ${model} seed ${seed}`, process.execPath, args);
    if (!run) return;
    const label = { framework: 'drmas', job: job.name, model, seed, ...extra };
    const metrics = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const rollouts = readFileSync(join(runDir, 'rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const samples = JSON.parse(readFileSync(input.settingsFile, 'utf8')).samplesPerPrompt;
    let promptsMatch = true;
    for (const m of metrics.filter((x) => typeof x['timing/step'] === 'number')) {
      const exported = input.tasks.filter((t) => t.step === m.step);
      const solverFirst = rollouts.filter((r) => r.step === m.step && r.agent === 'solver' && r.index === 0).map((r) => r.prompt);
      if (JSON.stringify([...new Set(solverFirst)].sort()) !== JSON.stringify(exported.map((t) => t.prompt).sort())) promptsMatch = false;
      const promptTokens = samples * exported.reduce((sum, t) => sum + t.promptTokens, 0);
      const scoring = m['timing/update/policy/old_log_probs'] ?? 0;
      const reward = (m['timing/reward'] ?? 0) + (m['timing/advantage'] ?? 0);
      record({
        ...label,
        step: m.step,
        seconds: m['timing/step'],
        generation: m['timing/rollout'],
        reward,
        scoring,
        update: m['timing/update'] - scoring,
        generatedTokens: m['response/tokens'],
        // The first turn's prompts (the Solver's); a later turn's prompt tokens are not in the metrics.
        trainedTokens: m['response/tokens'] + promptTokens,
        rewardMean: m['reward/mean'],
        outcomeMean: m['outcome/mean'],
      });
    }
    const last = metrics.filter((x) => typeof x['timing/step'] === 'number').at(-1);
    record({
      ...label,
      summary: true,
      steps: metrics.filter((x) => typeof x['timing/step'] === 'number').length,
      wallSeconds: run.wallSeconds,
      peakRssMiB: +(last['perf/max_cpu_memory_used_gb'] * 1024).toFixed(1),
      promptsMatch,
      runtime: 'drmas (defaults: onnxruntime-node, CPU)',
    });
    if (!promptsMatch) notices.push(`drmas ${job.name} ${model} seed ${seed}: its prompts differ from the exported ones`);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

/** A TRL setting `THREADSxPRECISION`, with `-nogc` where gradient checkpointing (GRPOConfig's default) is off. */
function trlSettingArgs(setting) {
  const match = /^(\d+)x(fp32|bf16)(-nogc)?$/.exec(setting);
  if (!match) throw new Error(`bench/peers: --trl-setting "${setting}" is not THREADSxPRECISION[-nogc] (e.g. 2xfp32, 2xfp32-nogc, 1xbf16)`);
  const [, threads, precision, noCheckpointing] = match;
  return ['--threads', threads, '--precision', precision, '--gradient-checkpointing', noCheckpointing ? 'off' : 'on'];
}

function trlRun(python, job, model, seed, input, setting, extra, runSteps = steps) {
  const args = [job.trl, '--tasks', input.tasksFile, '--model', input.modelDir, '--settings', input.settingsFile];
  args.push('--steps', String(runSteps), '--seed', String(seed), ...trlSettingArgs(setting));
  const run = child(`trl ${job.name} ${model} seed ${seed} (${setting})`, python, args);
  if (!run) return;
  for (const line of run.stdout.split('\n').filter((l) => l.startsWith('{"framework"'))) {
    const r = { ...JSON.parse(line), model, seed, setting, ...extra };
    if (r.summary) r.wallSeconds = run.wallSeconds;
    record(r);
  }
}

/**
 * TRL's settings on this machine: threads (1, cores) x precision (fp32, bf16 autocast) x gradient checkpointing (on,
 * GRPOConfig's default; off); the fastest is used.
 */
function trlSettings() {
  const cores = availableParallelism();
  return [...new Set([1, cores])].flatMap((t) => [`${t}xfp32`, `${t}xbf16`]).flatMap((s) => [s, `${s}-nogc`]);
}

async function waitQuiet() {
  const until = Date.now() + Number(values['wait-quiet']) * 1000;
  while (load()[0] >= quietLoad && Date.now() < until) await new Promise((r) => setTimeout(r, 15_000));
  return load()[0] < quietLoad;
}

async function measure() {
  const python = trlPython();
  let setting = values['trl-setting'];
  if (python && !setting) {
    // Which TRL setting is fastest here: 3 steps of the GRPO job on the first model, seed 0, each setting in turn.
    const probeJob = jobs.find((j) => j.name === 'grpo') ?? jobs[0];
    const input = await inputs(models[0], seeds[0], probeJob);
    const cores = availableParallelism();
    const candidates = values['trl-grid'] ? trlSettings() : ['1xfp32', `${cores}xfp32`, `${cores}xfp32-nogc`];
    for (const s of candidates)
      trlRun(python, probeJob, models[0], seeds[0], input, s, { probe: true, underLoad: load()[0] >= quietLoad }, Math.min(3, steps));
    // The mean over the steps after the first (which builds kernels and caches): a setting whose steps stall under
    // other processes' load (two OpenMP threads on two shared cores) pays for its stalls.
    const perStep = (s) => {
      const times = records.filter((r) => r.probe && r.setting === s && !r.summary && r.step > 1).map((r) => r.seconds);
      return times.reduce((a, b) => a + b, 0) / times.length;
    };
    setting = candidates.filter((s) => records.some((r) => r.probe && r.setting === s)).sort((a, b) => perStep(a) - perStep(b))[0];
  }
  for (let round = 0; round < rounds; round++) {
    for (const job of jobs) {
      for (const model of models) {
        for (const seed of seeds) {
          const quiet = await waitQuiet();
          const input = await inputs(model, seed, job);
          const extra = { round, underLoad: !quiet, loadAverage: load(), startedAt: new Date().toISOString() };
          const order = [() => drmasRun(job, model, seed, input, extra)];
          if (python && setting) order.push(() => trlRun(python, job, model, seed, input, setting, extra));
          for (const run of (round + seed) % 2 ? order.reverse() : order) run();
        }
      }
    }
  }
  return setting;
}

let trlSetting = values['trl-setting'];
let loads = { start: startLoad };
if (values.records) {
  // Several runs' output files, comma-separated: one section from all of their records.
  for (const file of values.records.split(',')) {
    if (!existsSync(file)) {
      console.error(
        `--records ${file}: no such file. --records reads the output of earlier runs (their printed logs) to write one section from them; to measure, leave it out.`,
      );
      process.exit(2);
    }
    // A run's log holds each record twice (as it was measured, and in the section it printed at the end).
    const seen = new Set();
    for (const line of readFileSync(file, 'utf8').split('\n'))
      if (line.startsWith('{"framework"') && !seen.has(line)) {
        seen.add(line);
        records.push(JSON.parse(line));
      }
  }
  const measured = records.filter((r) => r.loadAverage && !r.probe);
  trlSetting ??= [...new Set(records.filter((r) => r.framework === 'trl' && !r.probe && r.setting).map((r) => r.setting))].join(', ');
  loads = { start: measured[0]?.loadAverage ?? startLoad, end: measured.at(-1)?.loadAverage };
} else {
  trlSetting = await measure();
}
loads.end ??= load();

// The report's shape: what was asked for, or with --records what the records hold.
const recorded = records.filter((r) => !r.probe && r.model !== undefined);
const distinct = (key) => [...new Set(recorded.map((r) => r[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const shape = values.records
  ? {
      models: Object.keys(PEER_MODELS).filter((m) => recorded.some((r) => r.model === m)),
      steps: Math.max(0, ...recorded.map((r) => r.step ?? 0)),
      seeds: distinct('seed'),
      rounds: distinct('round').length,
    }
  : { models, steps, seeds, rounds };
const text = renderPeers({
  records,
  notices,
  jobs,
  ...shape,
  trlSetting,
  quietLoad,
  load: loads,
  command: `node bench/peers.mjs ${process.argv.slice(2).join(' ')}`.trim(),
});
console.error(text);
if (!values['no-write']) {
  const file = join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(file, replaceWholeSection(readFileSync(file, 'utf8'), PEERS_SECTION, text));
  console.error('bench/peers: wrote the section "Peer benchmark" of bench/RESULTS.md');
}
