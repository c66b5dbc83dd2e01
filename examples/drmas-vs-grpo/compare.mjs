#!/usr/bin/env node
// Dr. MAS vs GRPO at our scale: both estimators on the math and search presets, one model per agent (non-shared),
// several seeds, the same budget, on the experiment grid of examples/lib. Writes results.json and table.md into --out:
// avg@16 and pass@16 per estimator (mean ± sd, 95% CI, paired t-test against drmas), gradient-norm p99 and spikes per
// worker group and per agent. Usage (after `npm run build`): node examples/drmas-vs-grpo/compare.mjs [--seeds 3 | 0,1,2]
// [--steps 20] [--presets math,search] [--tasks 32] [--jobs 1] (runs at a time) [--set key=value ...] (extra settings
// for every run, e.g. rollout.promptsPerStep=4) [--out runs/drmas-vs-grpo] [--report-only] (render, train nothing)
import path from 'node:path';
import { parseArgs } from 'node:util';
import { commandLine, parseSeeds, planGrid, readRun, renderTables, REPO_ROOT, runGrid, writeResults } from '../lib/experimentGrid.mjs';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '3' },
    steps: { type: 'string' },
    presets: { type: 'string', default: 'math,search' },
    tasks: { type: 'string', default: '32' },
    jobs: { type: 'string', default: '1' },
    set: { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: path.join(REPO_ROOT, 'runs', 'drmas-vs-grpo') },
    'report-only': { type: 'boolean', default: false },
  },
});
const estimators = ['drmas', 'grpo'];
const out = path.relative(REPO_ROOT, path.resolve(values.out));
const runs = planGrid({
  variants: estimators.map((name) => ({ name, set: [`algorithm.advantage=${name}`] })),
  settings: values.presets.split(',').map((name) => ({ name, config: `examples/drmas-vs-grpo/${name}.non-shared.json` })),
  seeds: seedsOrExit(values.seeds),
  set: [...(values.steps ? [`trainer.steps=${values.steps}`] : []), `eval.tasks=${values.tasks}`, ...values.set],
  out,
});
if (!values['report-only']) await runGrid(runs, { jobs: Number(values.jobs) });
const results = runs.map(readRun);
console.log(
  writeResults(path.resolve(REPO_ROOT, out), results, renderTables(results, { reference: 'drmas', variants: estimators }), commandLine()),
);

/** The seeds `--seeds` names, or a one-line message and exit 1 (no stack trace for a mistyped option). */
function seedsOrExit(text) {
  try {
    return parseSeeds(text);
  } catch (error) {
    console.error(`${path.basename(process.argv[1])}: ${error.message}`);
    process.exit(1);
  }
}
