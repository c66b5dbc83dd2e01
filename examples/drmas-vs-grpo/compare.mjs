#!/usr/bin/env node
// Dr. MAS's claim at our scale (issue 25): drmas, grpo and Dr. MAS's two halves on their own (per-agent statistics
// only; per-turn averaging only) in the settings of this folder (math and M-ASK, shared and one model per agent),
// several seeds, one budget, each setting's base evaluated once per seed, on the experiment grid of examples/lib.
// Writes results.json and table.md into --out: avg@16 and pass@16 per variant (mean ± sd, 95% CI, paired t-test
// against drmas), gradient-norm p99, max and spikes per worker group and per agent, the agents' reward statistics and
// inflations (trainer.agentDiagnostics). Usage (after `npm run build`):
//   node examples/drmas-vs-grpo/compare.mjs [--settings math.shared,math.non-shared] [--variants drmas,grpo,...]
//     [--seeds 5 | 0,1,2] [--steps 60] [--tasks 64] [--jobs 1] [--set key=value ...] [--out DIR] [--archive FILE]
//     [--report-only]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { didYouMean } from '@drmas/core';
import {
  commandLine,
  parseSeeds,
  planGrid,
  readArchive,
  readRun,
  renderTables,
  REPO_ROOT,
  runGrid,
  writeArchive,
  writeResults,
} from '../lib/experimentGrid.mjs';

/** Each variant's settings: the group key (which rows share a baseline) and the averaging unit (what one sample is). */
const VARIANTS = {
  drmas: ['algorithm.advantage=drmas'],
  grpo: ['algorithm.advantage=grpo'],
  'per-agent-statistics-only': ['algorithm.advantage=grpo', 'algorithm.groupKey=prompt_agent', 'algorithm.statisticsUnit=trajectory'],
  'per-turn-averaging-only': ['algorithm.advantage=grpo', 'algorithm.groupKey=prompt', 'algorithm.statisticsUnit=turn'],
};
const HERE = path.join(REPO_ROOT, 'examples', 'drmas-vs-grpo');

const { values } = parseOptions({
  options: {
    settings: { type: 'string', default: 'math.shared,math.non-shared' },
    variants: { type: 'string', default: Object.keys(VARIANTS).join(',') },
    seeds: { type: 'string', default: '5' },
    steps: { type: 'string', default: '60' },
    tasks: { type: 'string', default: '64' },
    jobs: { type: 'string', default: '1' },
    set: { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: path.join(REPO_ROOT, 'runs', 'drmas-vs-grpo') },
    archive: { type: 'string' },
    'report-only': { type: 'boolean', default: false },
  },
});
const variants = values.variants.split(',');
const unknownVariant = variants.find((v) => !(v in VARIANTS));
if (unknownVariant) exit(`--variants ${unknownVariant}: not a variant\nhint: choose among ${Object.keys(VARIANTS).join(', ')}`);
const settings = values.settings.split(',').map((name) => ({ name, config: `examples/drmas-vs-grpo/${name}.json` }));
const missing = settings.find((s) => !existsSync(path.join(REPO_ROOT, s.config)));
if (missing)
  exit(
    `--settings ${missing.name}: no ${missing.config}\nhint: a setting is a config file of examples/drmas-vs-grpo without its .json (${HERE})`,
  );
const seeds = (() => {
  try {
    return parseSeeds(values.seeds);
  } catch (error) {
    return exit(error.message);
  }
})();

const out = path.relative(REPO_ROOT, path.resolve(values.out));
const runs = planGrid({
  variants: variants.map((name) => ({ name, set: VARIANTS[name], base: 'base' })),
  settings,
  bases: { base: {} },
  seeds,
  set: [`trainer.steps=${values.steps}`, `eval.tasks=${values.tasks}`, ...values.set],
  out,
});
const archiveFile = values.archive && path.resolve(values.archive);
const archive = (() => {
  try {
    return archiveFile ? readArchive(archiveFile) : undefined;
  } catch (error) {
    return exit(`--archive ${error.message}`);
  }
})();
// Each run is archived as it finishes: a grid cut off at a session's end keeps what it finished.
const archiveRun = (run) => writeArchive(archiveFile, archive, [run], [readRun(run, { archive })]);
if (!values['report-only'])
  await runGrid(runs, { jobs: Number(values.jobs), archive, onFinished: archiveFile ? archiveRun : undefined }).catch((error) =>
    exit(error.message),
  );
const results = runs.map((run) => readRun(run, { archive }));
if (archiveFile) writeArchive(archiveFile, archive, runs, results);
console.log(writeResults(path.resolve(REPO_ROOT, out), results, renderTables(results, { reference: 'drmas', variants }), commandLine()));

/** `parseArgs`, with an unknown or malformed option a one-line error (exit 1) rather than a stack trace. */
function parseOptions(config) {
  try {
    return parseArgs(config);
  } catch (error) {
    const options = Object.keys(config.options).map((o) => `--${o}`);
    const unknown = /Unknown option '(--[^']+)'/.exec(error.message)?.[1];
    const suggestion = unknown ? didYouMean(unknown, options) : '';
    return exit(`${error.message}${suggestion ? `.${suggestion}` : ''}\nhint: the options are ${options.join(', ')}`);
  }
}

/** A one-line message and exit 1: no stack trace for a mistyped option. */
function exit(message) {
  console.error(`${path.basename(process.argv[1])}: ${message}`);
  process.exit(1);
}
