import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CONFIG_HELP,
  CONFIG_OPTIONS,
  createKernel,
  createOutputDirectory,
  DrmasError,
  integerOption,
  numberOption,
  Rollouts,
  type CliCommand,
} from '@drmas/core';
import { demonstrationLines } from '../demonstrations/collectDemonstrations.js';

/** The most episodes one `drmas collect` runs. */
const MAX_EPISODES = 1_000_000;

/** Writes (or appends) to the output file; a failure is OUTPUT_UNWRITABLE naming `--out`. */
function writeOut(file: string, text: string, append: boolean): void {
  try {
    if (append) appendFileSync(file, text);
    else writeFileSync(file, text);
  } catch (cause) {
    throw new DrmasError('OUTPUT_UNWRITABLE', `cannot write ${file}: ${(cause as Error).message}`, {
      key: '--out',
      cause,
      hint: 'give --out a file in a folder you can write to',
    });
  }
}

export const collect: CliCommand = {
  name: 'collect',
  summary: 'run episodes with the configured policy (no training) and write their turns as drmas sft demonstrations',
  usage: 'drmas collect --config PATH --episodes N --out FILE.jsonl [--min-reward R] [--run-dir DIR]',
  help: [
    ...CONFIG_HELP,
    ['--episodes N', 'episodes to run: rollout steps of the orchestra (rollout.promptsPerStep x samplesPerPrompt each) until N'],
    ['--out FILE', 'JSONL of {"agent", "prompt", "response", "reward"} per agent turn: what drmas sft --data reads'],
    ['--min-reward R', "write only the turns of episodes whose outcome (the environment's reward) is at least R (default: every episode)"],
    ['--run-dir DIR', 'the run folder (config.json, metrics.jsonl; default <trainer.outputDir>/collect-<time>)'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    episodes: { type: 'string' },
    out: { type: 'string' },
    'min-reward': { type: 'string' },
    'run-dir': { type: 'string' },
  },
  async run({ values }, io) {
    const episodes = integerOption(values, 'episodes', { min: 1, max: MAX_EPISODES, of: 'episodes', example: 64 });
    if (episodes === undefined)
      throw new DrmasError('INVALID_ARGUMENT', '--episodes is required', { key: '--episodes', hint: 'e.g. --episodes 64' });
    if (!values.out) throw new DrmasError('INVALID_ARGUMENT', '--out is required', { key: '--out', hint: 'e.g. --out demos.jsonl' });
    const minReward = numberOption(values, 'min-reward', { min: -Number.MAX_VALUE, example: 1 }) ?? -Infinity;
    const out = path.resolve(io.cwd, values.out as string);
    const { kernel, config, file } = await createKernel({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
    });
    if (!kernel.hasTaps('rollout')) {
      throw new DrmasError('NO_ROLLOUT', `nothing in ${file ?? 'the config'} runs episodes: no preset or plugin taps the rollout hook`, {
        key: 'presets',
        file,
        hint: 'add a preset with an environment and an orchestra, e.g. "presets": ["math"]',
      });
    }
    createOutputDirectory(path.dirname(out), '--out');
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const runDir = path.resolve(
      io.cwd,
      (values['run-dir'] as string | undefined) ??
        path.join(config.trainer.outputDir, `collect-${new Date().toISOString().replace(/[:.]/g, '-')}`),
    );
    const run = await kernel.setup({ runDir, runDirKey: values['run-dir'] === undefined ? 'trainer.outputDir' : '--run-dir', log });
    let ran = 0;
    let kept = 0;
    let lines = 0;
    let invalid = 0;
    let outcomes = 0;
    try {
      // Emptied only once the run folder is this command's: a refused collect leaves earlier demonstrations alone.
      writeOut(out, '', false);
      for (let round = 1; ran < episodes; round++) {
        const batch = await kernel.get(Rollouts).next({ run, step: round, metrics: {}, distributions: {} });
        const trajectories = batch.trajectories.slice(0, episodes - ran);
        if (trajectories.length === 0)
          throw new DrmasError('NO_ROLLOUT', `rollout step ${round} ran no episodes, so ${episodes} cannot be collected`, {
            key: 'rollout',
            file,
            hint: 'check the orchestra and the environment with drmas info',
          });
        ran += trajectories.length;
        let text = '';
        for (const trajectory of trajectories) {
          const reward = trajectory.outcome ?? 0;
          outcomes += reward;
          if (reward < minReward) continue;
          kept++;
          const valid = trajectory.turns.filter((turn) => turn.valid);
          invalid += trajectory.turns.length - valid.length;
          for (const line of demonstrationLines(valid)) text += `${JSON.stringify({ ...line, reward })}\n`;
          lines += valid.length;
        }
        writeOut(out, text, true);
        log(`collect step ${round}: ${ran}/${episodes} episodes, ${kept} kept, ${lines} turns written`);
      }
      log(
        `collected ${lines} turns of ${kept}/${ran} episodes (mean outcome ${(outcomes / ran).toFixed(3)}` +
          `${invalid ? `; ${invalid} malformed turns of kept episodes left out` : ''}) into ${out}`,
      );
    } finally {
      await kernel.shutdown();
    }
    if (lines === 0) log(`no episode reached --min-reward ${minReward}: ${out} is empty`);
    return 0;
  },
};
