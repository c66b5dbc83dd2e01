// The experiment grid of examples/drmas-vs-grpo and examples/marl: trains variants x settings x seeds through
// `drmas train`, reuses finished runs and resumes interrupted ones from their last checkpoint (a grid spans sessions),
// takes finished runs from an archive file when their directories are gone (a grid spans machines), evaluates each
// base checkpoint once per seed, and renders every run (failed ones with their error) as results.json and markdown
// tables with seed statistics.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireRunLock, RUN_LOCK_FILE, RUN_LOCK_HANDOVER_ENV, runLockHolder } from '@drmas/core';
import { gradNormStats, mean, pairedTTest, summarize } from './seedStatistics.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(REPO_ROOT, 'core', 'bin', 'drmas.js');
/** What the grid records in each run directory: the command it ran, its status, wall time and error. */
export const GRID_RUN_FILE = 'grid-run.json';
/** The run's stdout and stderr. */
export const GRID_LOG_FILE = 'grid.log';
/** Per-agent metrics whose per-run means the tables report when a run has them. */
export const AGENT_METRICS = [
  'grad_norm',
  'grad_norm_max',
  'reward_mean',
  'reward_std',
  'constant_share',
  'inflation_predicted',
  'inflation_advantages',
  'inflation_measured',
];

/**
 * @typedef {{ name: string, config?: string, set?: string[], base?: string }} GridVariant
 * @typedef {{ name: string, config?: string, set?: string[] }} GridSetting
 * @typedef {{ kind: 'train' | 'base', variant: string, setting: string, seed: number, runDir: string, args: string[] }} GridRun
 * @typedef {{ steps: number, max: number, p99: number, median: number, spikes: number }} GradNormStats
 * @typedef {{ gradNorm: GradNormStats, means: Record<string, number> }} AgentFigures
 * @typedef {{
 *   kind: 'train' | 'base', variant: string, setting: string, seed: number, runDir: string, wallSeconds?: number,
 *   status: 'finished' | 'failed' | 'interrupted' | 'running' | 'not run', error?: string, reused?: boolean, archived?: boolean, k?: number, avg?: number, pass?: number,
 *   budget?: string, gradNorm?: Record<string, GradNormStats>, agents?: Record<string, AgentFigures>
 * }} RunResult
 * @typedef {Map<string, { args: string[], config?: string, result: RunResult }>} Archive
 */

/** `--seeds 3` (seeds 0, 1, 2) or `--seeds 0,1,2` (those seeds; `--seeds 2,` is seed 2 alone). */
export function parseSeeds(text) {
  const seeds = text.includes(',')
    ? text
        .split(',')
        .filter((part) => part.trim() !== '')
        .map(Number)
    : Array.from({ length: Number(text) }, (_, i) => i);
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new Error(`--seeds ${text}: give a count (3: seeds 0, 1, 2) or a list of seeds (0,1,2; one seed alone: 0,)`);
  }
  return seeds;
}

function seedSettings(seed) {
  return [`trainer.seed=${seed}`, `env.seed=${seed}`];
}

function setArgs(settings) {
  return settings.flatMap((s) => ['--set', s]);
}

function dirName(...parts) {
  return parts.filter(Boolean).join('-');
}

/**
 * The grid's runs. `variants`: { name, config?, set?, base? } (`base` names an entry of `bases`); `settings`:
 * { name, config?, set? }, one unnamed setting when left out (a variant's config wins over its setting's); `bases`:
 * name -> { config?, set? }, evaluated with `drmas eval` once per setting and seed (without a config, the setting's);
 * `set`: settings for every run.
 * Each run is { kind: 'train' | 'base', variant, setting, seed, runDir, args } with args for core/bin/drmas.js.
 * @param {{ variants: GridVariant[], settings?: GridSetting[], bases?: Record<string, { config?: string, set?: string[] }>,
 *   seeds: number[], set?: string[], out: string }} grid
 * @returns {GridRun[]}
 */
export function planGrid({ variants, settings = [{ name: '' }], bases = {}, seeds, set = [], out }) {
  const runs = [];
  for (const setting of settings) {
    const usedBases = new Set();
    for (const seed of seeds) {
      for (const variant of variants) {
        const config = variant.config ?? setting.config;
        if (!config) throw new Error(`variant ${variant.name}: neither it nor setting "${setting.name}" names a config file`);
        const runDir = path.join(out, dirName(setting.name, variant.name, `seed${seed}`));
        const settingsList = [
          ...(setting.set ?? []),
          ...(variant.set ?? []),
          ...seedSettings(seed),
          'eval.atStart=false',
          'report.progress=lines',
          ...set,
        ];
        runs.push({
          kind: 'train',
          variant: variant.name,
          setting: setting.name,
          seed,
          runDir,
          args: ['train', '--config', config, '--run-dir', runDir, ...setArgs(settingsList)],
        });
        if (variant.base) usedBases.add(variant.base);
      }
    }
    for (const name of usedBases) {
      const base = bases[name];
      if (!base) throw new Error(`a variant names base "${name}", which bases does not define`);
      for (const seed of seeds) {
        const runDir = path.join(out, dirName(setting.name, 'base', name, `seed${seed}`));
        const settingsList = [
          ...(setting.set ?? []),
          ...(base.set ?? []),
          ...seedSettings(seed),
          ...set.filter((s) => s.startsWith('eval.')),
        ];
        runs.push({
          kind: 'base',
          variant: `base:${name}`,
          setting: setting.name,
          seed,
          runDir,
          args: ['eval', '--config', base.config ?? setting.config, '--run-dir', runDir, ...setArgs(settingsList)],
        });
      }
    }
  }
  return runs;
}

/** The run's directory on disk: its `runDir` as given to the CLI, which runs in the repository root. */
function runPath(run) {
  return path.resolve(REPO_ROOT, run.runDir);
}

function readJsonLines(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

function readJson(file) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/**
 * Whether the run's directory holds its finished result: for training, an evaluation at the run's last step
 * (trainer.steps of the config.json it wrote); for a base, an evaluation at step 0.
 * @param {GridRun} run
 */
export function isFinished(run) {
  const evalFile = path.join(runPath(run), 'eval.jsonl');
  if (!existsSync(evalFile)) return false;
  const last = readJsonLines(evalFile).at(-1);
  if (!last) return false;
  if (run.kind === 'base') return last.step === 0;
  const config = readJson(path.join(runPath(run), 'config.json'));
  return config !== undefined && last.step === config.trainer?.steps;
}

/** Whether the run's directory holds a checkpoint (`checkpoints/step-*`) that `drmas train --resume auto` can start from. */
function hasCheckpoint(run) {
  return newestCheckpointStep(run) !== undefined;
}

function newestCheckpointStep(run) {
  const dir = path.join(runPath(run), 'checkpoints');
  const steps = existsSync(dir)
    ? readdirSync(dir)
        .flatMap((name) => /^step-(\d+)$/.exec(name)?.[1] ?? [])
        .map(Number)
    : [];
  return steps.length ? Math.max(...steps) : undefined;
}

/**
 * The run's state before the grid trains: `finished` (reused), `archived` (no finished directory here, but the archive
 * holds the run with these arguments: reused from there), `changed` (finished, interrupted or archived, but recorded
 * with other arguments than the grid's now: reusing it would report a run that was not asked for), `interrupted` (a
 * training run the grid started with these arguments that stopped after a checkpoint: it resumes from there),
 * `running` (a live `drmas` process holds its directory's run lock: another grid's, or a command of its own; left to
 * it), or `pending`.
 * @param {GridRun} run
 * @param {{ archive?: Archive }} [options]
 * @returns {'finished' | 'archived' | 'changed' | 'interrupted' | 'running' | 'pending'}
 */
export function runState(run, { archive } = {}) {
  // The lock first: it is rarely there, and `recordedState` reads the run's eval and config again.
  return runLockHolder(runPath(run)) && !isFinished(run) ? 'running' : recordedState(run, { archive });
}

/** `runState` without the run lock: what the run's directory and the archive say, whoever holds the folder now. */
function recordedState(run, { archive }) {
  const recorded = readJson(path.join(runPath(run), GRID_RUN_FILE));
  const sameArgs = !recorded?.args || sameRun(recorded, run);
  if (isFinished(run)) return sameArgs ? 'finished' : 'changed';
  const archived = archive?.get(archiveName(run));
  if (archived) return sameRun(archived, run, { anyOut: true }) ? 'archived' : 'changed';
  if (run.kind !== 'train' || !recorded || !hasCheckpoint(run)) return 'pending';
  return sameArgs ? 'interrupted' : 'changed';
}

/** The last `error ...` line the CLI printed (with its hint), or the log's tail. */
function errorOf(log, status) {
  const lines = log.split('\n').filter((l) => l.trim());
  const at = lines.findLastIndex((l) => /^error\b/.test(l));
  if (at >= 0) return lines.slice(at, at + 2).join(' ');
  return `exit status ${status}${lines.length ? `: ${lines.slice(-2).join(' ')}` : ''}`;
}

/**
 * Trains or evaluates one run through the CLI. A pending run starts in an emptied directory; an interrupted one
 * continues with `--resume auto` (the trainer's exact resume: the same steps the uninterrupted run would take). The
 * record is written before the child starts, so a grid killed mid-run leaves a run the next grid resumes; its wall
 * time adds up the parts the grid saw end. `planned` is the state the grid planned with; the folder's state once the
 * grid holds its lock decides.
 */
function execute(run, log, planned, archive) {
  let lock;
  try {
    lock = acquireRunLock(runPath(run), 'runDir', `experiment grid: ${describe(run)}`);
  } catch (error) {
    if (error?.code !== 'RUN_DIR_IN_USE') throw error;
    // Taken since the grid planned (another grid, started beside this one): its directory is not this grid's to clear.
    const holder = runLockHolder(runPath(run));
    log(
      `${describe(run)}: left to ${holder ? `process ${holder.pid}, which started writing ${run.runDir} at ${holder.startedAt}` : 'another process'}`,
    );
    return Promise.resolve({ status: 'running' });
  }
  // A grid beside this one may have finished the run, or started it and stopped after a checkpoint, since this grid
  // planned: what the folder holds now decides, so a finished run is never cleared and a checkpoint never thrown away.
  const state = recordedState(run, { archive });
  if (state !== 'pending' && state !== 'interrupted') {
    lock.release();
    log(
      `${describe(run)}: ${state === 'changed' ? 'recorded with other arguments' : 'finished'} by another process since this grid planned it; left as it is`,
    );
    return Promise.resolve({ status: state === 'changed' ? 'changed' : 'reused' });
  }
  if (planned === 'pending' && state === 'interrupted')
    log(`${describe(run)}: stopped with a checkpoint by another process since this grid planned it; resumes`);
  const recordFile = path.join(runPath(run), GRID_RUN_FILE);
  const earlier = state === 'interrupted' ? readJson(recordFile) : undefined;
  if (!earlier) {
    for (const name of readdirSync(runPath(run))) {
      if (name !== RUN_LOCK_FILE) rmSync(path.join(runPath(run), name), { recursive: true, force: true });
    }
  }
  const previousSeconds = earlier?.wallSeconds ?? 0;
  const resumes = (earlier?.resumes ?? -1) + 1;
  const config = configDigest(run);
  writeFileSync(
    recordFile,
    `${JSON.stringify({ args: run.args, config, status: 'running', wallSeconds: previousSeconds, resumes }, null, 2)}\n`,
  );
  const logFile = path.join(runPath(run), GRID_LOG_FILE);
  const earlierLog = earlier && existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
  const started = Date.now();
  const args = earlier ? [...run.args, '--resume', 'auto'] : run.args;
  return new Promise((resolve) => {
    // The child takes the grid's lock over, so no other process can claim the folder between the two.
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, [RUN_LOCK_HANDOVER_ENV]: lock.id },
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const finish = (status, spawnError) => {
      lock.release();
      const text = Buffer.concat(chunks).toString('utf8');
      writeFileSync(logFile, earlierLog ? `${earlierLog}\n--- resumed by the grid: ${args.join(' ')}\n${text}` : text);
      const wallSeconds = previousSeconds + (Date.now() - started) / 1000;
      const ok = status === 0 && isFinished(run);
      const record = {
        args: run.args,
        config,
        status: ok ? 'finished' : 'failed',
        wallSeconds,
        ...(resumes > 0 && { resumes }),
        finishedAt: new Date().toISOString(),
        ...(ok
          ? {}
          : { error: spawnError ? String(spawnError) : status === 0 ? 'exited 0 without a final evaluation' : errorOf(text, status) }),
      };
      writeFileSync(recordFile, `${JSON.stringify(record, null, 2)}\n`);
      log(
        `${describe(run)}: ${record.status} in ${wallSeconds.toFixed(0)} s${resumes > 0 ? ` (resumed ${resumes}x)` : ''}${record.error ? ` (${record.error})` : ''}`,
      );
      resolve(record);
    };
    child.on('error', (error) => finish(-1, error));
    child.on('close', (status) => finish(status));
  });
}

function describe(run) {
  return [run.setting, run.variant, `seed ${run.seed}`].filter(Boolean).join(' ');
}

/**
 * Runs the grid's pending and interrupted runs `jobs` at a time (finished ones are reused, from their directories or
 * the archive; interrupted ones resume from their last checkpoint; a run recorded with other arguments stops the grid
 * before anything trains). `only(run)`
 * picks the runs to train; the others are left as they are.
 * @param {GridRun[]} runs
 * `onFinished(run)` is called as each run finishes (`compare.mjs` archives it then, so a grid cut off later keeps it).
 * @param {{ jobs?: number, only?: (run: GridRun) => boolean, archive?: Archive, onFinished?: (run: GridRun) => void,
 *   log?: (line: string) => void }} [options]
 */
export async function runGrid(
  runs,
  { jobs = 1, only = () => true, archive, onFinished = () => {}, log = (line) => console.error(line) } = {},
) {
  const states = new Map(runs.filter(only).map((run) => [run, runState(run, { archive })]));
  const changed = [...states].filter(([, state]) => state === 'changed').map(([run]) => run);
  if (changed.length > 0) {
    throw new Error(
      `${changed.map((r) => r.runDir).join(', ')} ran with other arguments than this grid's (in its directory or the archive); give another --out, or delete them to rerun`,
    );
  }
  const archived = [...states.values()].filter((state) => state === 'archived').length;
  const pending = [...states].filter(([, state]) => state === 'pending' || state === 'interrupted').map(([run]) => run);
  const resumed = pending.filter((run) => states.get(run) === 'interrupted').length;
  const running = [...states].filter(([, state]) => state === 'running').map(([run]) => run);
  log(
    `${states.size - pending.length - running.length} finished runs reused${archived ? ` (${archived} from the archive)` : ''}, ${pending.length} to run${resumed ? ` (${resumed} resuming from a checkpoint)` : ''}, ${jobs} at a time` +
      (running.length ? `; ${running.length} running in another process, left to it (${running.map((r) => r.runDir).join(', ')})` : ''),
  );
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let run = pending.shift(); run; run = pending.shift()) {
        const state = states.get(run);
        log(`[${++done}] ${describe(run)}${state === 'interrupted' ? ' (resumes)' : ''}: node core/bin/drmas.js ${run.args.join(' ')}`);
        if ((await execute(run, log, state, archive)).status === 'finished') onFinished(run);
      }
    }),
  );
}

function evalValue(evaluation, name) {
  const key = Object.keys(evaluation).find((k) => new RegExp(`^val/${name}@\\d+$`).test(k));
  return key === undefined ? { k: undefined, value: NaN } : { k: Number(key.split('@')[1]), value: evaluation[key] };
}

function series(metrics, key) {
  return metrics.map((m) => m[key]).filter((v) => typeof v === 'number');
}

/**
 * One run's figures: status (`finished`, `failed` with its error, `interrupted` with its last checkpoint, or `not run`), avg@k and pass@k of its last
 * evaluation, and for training runs the gradient-norm statistics per worker group (`actor/<group>/grad_norm`) and per
 * agent (`agent/<role>/grad_norm`), with the per-run means of the agent metrics it has. A run whose directory holds
 * no finished result comes from the archive when it is there with the same arguments (`archived: true`).
 * @param {GridRun} run
 * @param {{ archive?: Archive }} [options]
 * @returns {RunResult}
 */
export function readRun(run, { archive } = {}) {
  const archived = isFinished(run) ? undefined : archive?.get(archiveName(run));
  if (archived && sameRun(archived, run, { anyOut: true })) return { ...archived.result, runDir: run.runDir, archived: true };
  const record = readJson(path.join(runPath(run), GRID_RUN_FILE));
  const base = {
    kind: run.kind,
    variant: run.variant,
    setting: run.setting,
    seed: run.seed,
    runDir: run.runDir,
    wallSeconds: record?.wallSeconds,
  };
  if (!isFinished(run)) {
    const holder = runLockHolder(runPath(run));
    if (holder) {
      const step = newestCheckpointStep(run);
      const error = `running in process ${holder.pid} since ${holder.startedAt}${step === undefined ? '' : ` (checkpoint at step ${step})`}`;
      return { ...base, status: 'running', error };
    }
    if (runState(run) === 'interrupted') {
      const error = `stopped with a checkpoint at step ${newestCheckpointStep(run)}: the grid resumes it${record.error ? ` (${record.error})` : ''}`;
      return { ...base, status: 'interrupted', error };
    }
    return record?.status === 'failed' ? { ...base, status: 'failed', error: record.error } : { ...base, status: 'not run' };
  }
  const evaluation = readJsonLines(path.join(runPath(run), 'eval.jsonl')).at(-1);
  const avg = evalValue(evaluation, 'avg');
  const pass = evalValue(evaluation, 'pass');
  const result = { ...base, status: 'finished', reused: record === undefined || undefined, k: avg.k, avg: avg.value, pass: pass.value };
  if (run.kind === 'base') return result;
  const config = readJson(path.join(runPath(run), 'config.json'));
  const metricsFile = path.join(runPath(run), 'metrics.jsonl');
  const metrics = existsSync(metricsFile) ? readJsonLines(metricsFile) : [];
  const keys = [...new Set(metrics.flatMap((m) => Object.keys(m)))];
  const groups = keys.map((k) => /^actor\/([^/]+)\/grad_norm$/.exec(k)?.[1]).filter(Boolean);
  const roles = [...new Set(keys.map((k) => /^agent\/([^/]+)\/grad_norm$/.exec(k)?.[1]).filter(Boolean))];
  // The run's own timing of the steps it kept (the last one's includes the final evaluation), each step once: the
  // grid's clock misses the part of a run cut off before a resume (the grid that started it never saw it end).
  const stepSeconds = series(metrics, 'timing/step');
  return {
    ...result,
    ...(stepSeconds.length === metrics.length && stepSeconds.length > 0 && { wallSeconds: stepSeconds.reduce((a, b) => a + b, 0) }),
    budget: `${config.trainer.steps} x ${config.rollout?.promptsPerStep} x ${config.rollout?.samplesPerPrompt}`,
    gradNorm: Object.fromEntries(groups.map((g) => [g, gradNormStats(series(metrics, `actor/${g}/grad_norm`))])),
    agents: Object.fromEntries(
      roles.map((role) => [
        role,
        {
          gradNorm: gradNormStats(series(metrics, `agent/${role}/grad_norm`)),
          means: Object.fromEntries(
            AGENT_METRICS.map((m) => [m, series(metrics, `agent/${role}/${m}`)])
              .filter(([, xs]) => xs.length > 0)
              .map(([m, xs]) => [m, mean(xs)]),
          ),
        },
      ]),
    ),
  };
}

const pct = (x) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-');
const num = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const pValue = (p) => (p < 0.001 ? '< 0.001' : p.toFixed(3));

function cell(summary) {
  if (summary.n === 0) return '-';
  return summary.n === 1 ? pct(summary.mean) : `${pct(summary.mean)} ± ${pct(summary.sd)}`;
}

function ciCell(summary) {
  return summary.ci95 ? `[${pct(summary.ci95[0])}, ${pct(summary.ci95[1])}]` : '-';
}

/** The paired difference against the reference over the seeds both finished, in points, with the test's p-value. */
function pairedCell(rows, referenceRows, key) {
  const seeds = rows.map((r) => r.seed).filter((seed) => referenceRows.some((r) => r.seed === seed));
  const test = pairedTTest(
    seeds.map((s) => rows.find((r) => r.seed === s)[key]),
    seeds.map((s) => referenceRows.find((r) => r.seed === s)[key]),
  );
  if (!test) return '-';
  // Every seed differing by the same amount makes t infinite: p 0 says nothing there (two seeds often do it).
  const p = Number.isFinite(test.t) ? `p ${pValue(test.p)}` : 'no spread to test';
  return `${test.meanDiff >= 0 ? '+' : ''}${pct(test.meanDiff)} (${p}, n ${test.n})`;
}

function statusNote(rows) {
  const failed = rows.filter((r) => r.status === 'failed');
  const missing = rows.filter((r) => r.status === 'not run');
  return [
    ...failed.map((r) => `seed ${r.seed} failed`),
    ...rows.filter((r) => r.status === 'interrupted' || r.status === 'running').map((r) => `seed ${r.seed} ${r.status}`),
    ...(missing.length ? [`seed${missing.length > 1 ? 's' : ''} ${missing.map((r) => r.seed).join(', ')} not run`] : []),
  ].join('; ');
}

/**
 * Markdown tables of the grid's results: per setting and variant, avg@k and pass@k as mean ± sd and 95% CI over the
 * finished seeds, the paired difference against `reference` (t-test p-value), the median wall time; the bases'
 * rows first; then gradient norms per worker group and per agent; then every run with its status.
 * @param {RunResult[]} results
 * @param {{ reference: string, variants: string[] }} options
 */
export function renderTables(results, { reference, variants }) {
  const settings = [...new Set(results.map((r) => r.setting))];
  const named = settings.some(Boolean);
  const k = results.find((r) => r.k !== undefined)?.k ?? 'k';
  const seeds = [...new Set(results.map((r) => r.seed))];
  const main = [
    `| ${named ? 'setting | ' : ''}variant | steps x prompts x samples | seeds | avg@${k} (mean ± sd) | avg@${k} 95% CI | pass@${k} (mean ± sd) | pass@${k} 95% CI | avg@${k} vs ${reference} (paired) | pass@${k} vs ${reference} (paired) | wall per run (median) | runs |`,
    `| ${named ? '--- | ' : ''}--- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  ];
  const norms = [
    `| ${named ? 'setting | ' : ''}variant | worker group or agent | grad-norm p99 (mean over seeds) | grad-norm max (mean) | spikes > 5x median (total) | ${AGENT_METRICS.filter((m) => !m.startsWith('grad_norm')).join(' | ')} |`,
    `| ${named ? '--- | ' : ''}--- | --- | --- | --- | --- | ${AGENT_METRICS.filter((m) => !m.startsWith('grad_norm'))
      .map(() => '---')
      .join(' | ')} |`,
  ];
  for (const setting of settings) {
    const lead = named ? `${setting} | ` : '';
    const inSetting = results.filter((r) => r.setting === setting);
    const order = [...new Set(inSetting.filter((r) => r.kind === 'base').map((r) => r.variant)), ...variants];
    const referenceRows = inSetting.filter((r) => r.variant === reference && r.status === 'finished');
    for (const variant of order) {
      const rows = inSetting.filter((r) => r.variant === variant);
      if (rows.length === 0) continue;
      const finished = rows.filter((r) => r.status === 'finished');
      const note = statusNote(rows);
      if (finished.length === 0) {
        main.push(
          `| ${lead}${variant} | - | 0 of ${rows.length} | ${'- | '.repeat(7)}${rows.every((r) => r.status === 'not run') ? 'not run' : note} |`,
        );
        continue;
      }
      const avg = summarize(finished.map((r) => r.avg));
      const pass = summarize(finished.map((r) => r.pass));
      const isBase = rows[0].kind === 'base';
      const paired =
        isBase || variant === reference
          ? ['-', '-']
          : [pairedCell(finished, referenceRows, 'avg'), pairedCell(finished, referenceRows, 'pass')];
      const walls = finished
        .map((r) => r.wallSeconds)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      const wall = walls.length ? `${(walls[Math.floor((walls.length - 1) / 2)] / 60).toFixed(1)} min` : '-';
      const budget = isBase ? 'step 0' : [...new Set(finished.map((r) => r.budget))].join(', ');
      main.push(
        `| ${lead}${variant} | ${budget} | ${finished.length} of ${rows.length} | ${cell(avg)} | ${ciCell(avg)} | ${cell(pass)} | ${ciCell(pass)} | ${paired[0]} | ${paired[1]} | ${wall} | ${note || 'all finished'} |`,
      );
      if (isBase) continue;
      const units = [
        ...[...new Set(finished.flatMap((r) => Object.keys(r.gradNorm)))].map((g) => ({
          label: `group ${g}`,
          of: (r) => ({ gradNorm: r.gradNorm[g] }),
        })),
        ...[...new Set(finished.flatMap((r) => Object.keys(r.agents)))].map((a) => ({ label: `agent ${a}`, of: (r) => r.agents[a] })),
      ];
      for (const unit of units) {
        const stats = finished.map(unit.of).filter(Boolean);
        const gn = stats.map((s) => s.gradNorm).filter(Boolean);
        const extra = AGENT_METRICS.filter((m) => !m.startsWith('grad_norm')).map((m) => {
          const xs = stats.map((s) => s.means?.[m]).filter(Number.isFinite);
          return xs.length ? num(mean(xs)) : '-';
        });
        // A seed where the unit never had a nonzero norm (an agent no step moved) has no p99: the mean is over the others.
        const normCell = (name) => {
          const xs = gn.map((s) => s[name]).filter(Number.isFinite);
          return xs.length === 0 ? '-' : `${num(mean(xs))}${xs.length < gn.length ? ` (${xs.length} of ${gn.length} seeds)` : ''}`;
        };
        norms.push(
          `| ${lead}${variant} | ${unit.label} | ${normCell('p99')} | ${normCell('max')} | ${gn.reduce((a, s) => a + s.spikes, 0)} | ${extra.join(' | ')} |`,
        );
      }
    }
  }
  // Runs not started are counted in the main table's last column; every run started is listed here, failed ones too.
  const runs = [
    '| run | status | wall | avg@k | pass@k | error |',
    '| --- | --- | --- | --- | --- | --- |',
    ...results
      .filter((r) => r.status !== 'not run')
      .map(
        (r) =>
          `| ${path.basename(r.runDir)} | ${r.status}${r.reused ? ' (reused, no recorded command)' : ''}${r.archived ? ' (archive)' : ''} | ${Number.isFinite(r.wallSeconds) ? `${(r.wallSeconds / 60).toFixed(1)} min` : '-'} | ${pct(r.avg)} | ${pct(r.pass)} | ${r.error ?? ''} |`,
      ),
  ];
  return {
    main: main.join('\n'),
    gradNorms: norms.join('\n'),
    runs: runs.join('\n'),
    seeds,
  };
}

/** Writes results.json and table.md into `out`; returns the markdown. */
export function writeResults(out, results, tables, command) {
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  const markdown = [
    `Command: \`${command}\``,
    '',
    tables.main,
    '',
    'Gradient norms (pre-clip, per step; steps with a zero norm, where every group tied, left out; agent rows where the runs log `agent/<role>/grad_norm`):',
    '',
    tables.gradNorms,
    '',
    'Every run:',
    '',
    tables.runs,
    '',
  ].join('\n');
  writeFileSync(path.join(out, 'table.md'), markdown);
  return markdown;
}

/** The command line that produced a table, relative to the repository root. */
export function commandLine(argv = process.argv) {
  return ['node', path.relative(REPO_ROOT, argv[1]), ...argv.slice(2)].join(' ');
}

/**
 * The archive's name for a run: its directory's name, so a run archived under one `--out` is found under another.
 * @param {GridRun} run
 */
function archiveName(run) {
  return path.basename(run.runDir);
}

/**
 * The text of the run's config file, digested (the first 16 hex digits of its SHA-256): a run recorded with the same
 * arguments over an edited config is another run. Undefined when the file cannot be read.
 * @param {GridRun} run
 */
function configDigest(run) {
  const file = path.resolve(REPO_ROOT, run.args[run.args.indexOf('--config') + 1]);
  return existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16) : undefined;
}

/**
 * Whether a recorded run (a grid record or an archive entry: its `args` and `config` digest) is `run`: the same
 * arguments (with `anyOut`, but for the folder above the run's directory in `--run-dir`) and, where the record has a
 * digest, the same config file text.
 * @param {{ args: string[], config?: string }} recorded
 * @param {GridRun} run
 */
function sameRun(recorded, run, { anyOut = false } = {}) {
  const normal = (args) => (anyOut ? args.map((arg, i) => (args[i - 1] === '--run-dir' ? path.basename(arg) : arg)) : args);
  if (JSON.stringify(normal(recorded.args)) !== JSON.stringify(normal(run.args))) return false;
  return recorded.config === undefined || recorded.config === configDigest(run);
}

/** Figures JSON writes as null when they are NaN. */
const NAN_FIGURES = new Set(['max', 'p99', 'median', 'avg', 'pass']);

/**
 * An archive of finished runs (`--archive FILE`): each run's arguments, config digest and figures (what `readRun`
 * gives, without the per-step metrics), by run directory name. A grid reuses an archived run whose directory here holds no finished
 * result, so runs made in other sessions or on other machines, whose directories are gone, count in the tables; an
 * archived run with other arguments stops the grid as a changed directory does. No file yet: an empty archive.
 * @param {string} file
 * @returns {Archive}
 */
export function readArchive(file) {
  if (!existsSync(file)) return new Map();
  let entries;
  try {
    // JSON writes a NaN figure (a gradient-norm statistic of no nonzero step) as null: it is read back as NaN.
    entries = JSON.parse(readFileSync(file, 'utf8'), (key, value) => (value === null && NAN_FIGURES.has(key) ? NaN : value)).runs;
  } catch (error) {
    throw new Error(`${file}: not an archive of grid runs (${error.message}); give another --archive, or delete it to start afresh`, {
      cause: error,
    });
  }
  if (!Array.isArray(entries) || entries.some((e) => !Array.isArray(e?.args) || e?.result?.status !== 'finished'))
    throw new Error(`${file}: not an archive of grid runs (each entry holds a finished run's args and result); give another --archive`);
  return new Map(entries.map((entry) => [path.basename(entry.result.runDir), entry]));
}

/**
 * Adds the grid's finished runs to the archive file (a run archived before is replaced by its finished directory's
 * figures) and writes it whole (a temporary file renamed over it), entries sorted by name; runs that did not finish
 * are left out, archived ones kept, and runs another grid added to the file meanwhile kept too.
 * @param {string} file
 * @param {Archive} archive
 * @param {GridRun[]} runs
 * @param {RunResult[]} results the runs' `readRun` figures, in the same order
 */
export function writeArchive(file, archive, runs, results) {
  runs.forEach((run, i) => {
    const result = results[i];
    if (result.status !== 'finished' || result.archived) return;
    const { runDir, ...figures } = result;
    const config = readJson(path.join(runPath(run), GRID_RUN_FILE))?.config ?? configDigest(run);
    archive.set(archiveName(run), { args: run.args, config, result: { ...figures, runDir: path.basename(runDir) } });
  });
  // Another grid may have added runs since this one read the file (two grids on disjoint seeds): keep them.
  for (const [name, entry] of readArchive(file)) if (!archive.has(name)) archive.set(name, entry);
  const runsList = [...archive].sort(([a], [b]) => a.localeCompare(b)).map(([, entry]) => entry);
  mkdirSync(path.dirname(file), { recursive: true });
  const written = `${file}.${process.pid}.tmp`;
  writeFileSync(written, `${JSON.stringify({ runs: runsList }, null, 1)}\n`);
  renameSync(written, file);
}
