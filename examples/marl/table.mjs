#!/usr/bin/env node
// The learners table of issue 20: every learner of examples/marl on the math preset at the main job's budget (30 steps
// of 8 prompts x 4 samples, avg@16 and pass@16 on 64 held-out tasks), several seeds, paired against drmas; each base
// evaluated once per seed. Finished runs are reused, so rows can be added run by run; rows not run yet show as such.
// Usage (after `npm run build`): node examples/marl/table.mjs [--learners drmas,grpo,...] [--seeds 0,1,2] [--jobs 1]
// [--out runs/marl-learners] [--set key=value ...] [--report-only] (render what has finished, train nothing)
// [--no-readme] (leave the table in README.md as it is)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { commandLine, parseSeeds, planGrid, readRun, renderTables, REPO_ROOT, runGrid, writeResults } from '../lib/experimentGrid.mjs';

/** The rows, in the table's order; cory runs its own workflow (pioneer and observer), so its base is its own. */
const LEARNERS = ['drmas', 'grpo', 'ppo-gae', 'ippo', 'mappo', 'happo', 'cory', 'vdn', 'qmix', 'magrpo', 'marloo', 'rae'];
const BASES = { math: { config: 'examples/marl/drmas.config.json' }, cory: { config: 'examples/marl/cory.config.json' } };
const README = path.join(REPO_ROOT, 'examples', 'marl', 'README.md');
const MARKERS = ['<!-- learners-table -->', '<!-- /learners-table -->'];

const { values } = parseArgs({
  options: {
    learners: { type: 'string', default: LEARNERS.join(',') },
    seeds: { type: 'string', default: '0,1,2' },
    jobs: { type: 'string', default: '1' },
    out: { type: 'string', default: 'runs/marl-learners' },
    set: { type: 'string', multiple: true, default: [] },
    'report-only': { type: 'boolean', default: false },
    'no-readme': { type: 'boolean', default: false },
  },
});
const chosen = values.learners.split(',');
const unknown = chosen.filter((l) => !LEARNERS.includes(l));
if (unknown.length) {
  console.error(`error: --learners ${unknown.join(', ')}: not a learner of the table\nhint: choose among ${LEARNERS.join(', ')}`);
  process.exit(1);
}
const seeds = seedsOrExit(values.seeds);
// Paths relative to the repository root, where the runs start: the recorded commands then read the same anywhere.
const out = path.relative(REPO_ROOT, path.resolve(values.out));
const runs = planGrid({
  variants: LEARNERS.map((name) => ({ name, config: `examples/marl/${name}.config.json`, base: name === 'cory' ? 'cory' : 'math' })),
  bases: BASES,
  seeds,
  set: values.set,
  out,
});
// The chosen learners train, and the bases they are compared with; every learner is rendered.
const chosenBases = new Set(chosen.map((l) => `base:${l === 'cory' ? 'cory' : 'math'}`));
if (!values['report-only'])
  await runGrid(runs, { jobs: Number(values.jobs), only: (run) => chosen.includes(run.variant) || chosenBases.has(run.variant) });

const results = runs.map((run) => readRun(run));
const tables = renderTables(results, { reference: 'drmas', variants: LEARNERS });
const markdown = writeResults(path.resolve(REPO_ROOT, out), results, tables, commandLine());
console.log(markdown);
if (!values['no-readme']) {
  const readme = readFileSync(README, 'utf8');
  const [start, end] = [readme.indexOf(MARKERS[0]), readme.indexOf(MARKERS[1])];
  if (start < 0 || end < start) throw new Error(`${README} has no ${MARKERS.join(' ... ')} section for the table`);
  writeFileSync(README, `${readme.slice(0, start + MARKERS[0].length)}\n\n${markdown}\n${readme.slice(end)}`);
}

/** The seeds `--seeds` names, or a one-line message and exit 1 (no stack trace for a mistyped option). */
function seedsOrExit(text) {
  try {
    return parseSeeds(text);
  } catch (error) {
    console.error(`${path.basename(process.argv[1])}: ${error.message}`);
    process.exit(1);
  }
}
