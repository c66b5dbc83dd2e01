import { afterAll, afterEach, beforeEach, expect } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseHistoryLine } from '../src/index.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { readMetricLines } from '../../../test/support/runFiles.js';
import { WandbStandIn } from './wandbStandIn.js';

const scratch = new TempProject('wandb-sigint');
afterAll(() => scratch.dispose());

let server: WandbStandIn;
let baseUrl: string;
beforeEach(async () => {
  server = new WandbStandIn();
  baseUrl = await server.start();
});
afterEach(() => server.stop());

interface Interrupted {
  code: number | null;
  stderr: string;
  /** The step of the last metrics.jsonl line. */
  lastStep: number;
  checkpoints: string[];
}

/**
 * `drmas train` in a child process (the built CLI, as a user runs it; plugins by name load from dist), sent SIGINT once
 * the first metrics line is written. The stand-in answers from this process, so the child is spawned, not run sync.
 */
async function trainAndInterrupt(name: string, plugins: unknown[]): Promise<Interrupted> {
  const dir = scratch.path(name);
  scratch.write({
    [`${name}/drmas.config.json`]: {
      presets: ['math'],
      plugins,
      rollout: { promptsPerStep: 1, samplesPerPrompt: 2 },
      eval: { atStart: false, atEnd: false },
      report: { html: false, progress: 'off' },
      trainer: { steps: 1000, seed: 0, saveEvery: 0 },
    },
  });
  const runDir = path.join(dir, 'run');
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), 'train', '--config', 'drmas.config.json', '--run-dir', runDir],
    {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: '', WANDB_BASE_URL: baseUrl, WANDB_API_KEY: server.apiKey },
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const metrics = path.join(runDir, 'metrics.jsonl');
  const deadline = Date.now() + 60_000;
  while (!(existsSync(metrics) && readFileSync(metrics, 'utf8').includes('\n')) && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGINT');
  const code = await exited;
  return {
    code,
    stderr,
    lastStep: readMetricLines(runDir).at(-1)!.step!,
    checkpoints: readdirSync(path.join(runDir, 'checkpoints')).filter((entry) => entry.startsWith('step-')),
  };
}

testSlow(
  'Ctrl-C with the wandb plugin ends as without it: the checkpoint of the last step, the same exit code; W&B gets 255 (slow)',
  async () => {
    const without = await trainAndInterrupt('without', []);
    const withWandb = await trainAndInterrupt('with', ['wandb']);

    for (const run of [without, withWandb]) {
      expect(run.stderr).toMatch(/stopping before step \d+: SIGINT/);
      expect(run.checkpoints).toEqual([`step-${String(run.lastStep).padStart(6, '0')}`]);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(without.code).toBe(0);
    expect(withWandb.code).toBe(without.code);

    const run = server.onlyRun();
    expect(run.exitcodes).toEqual([255]);
    const steps = run.history.map((line) => parseHistoryLine(line)._step);
    expect(steps).toEqual(Array.from({ length: withWandb.lastStep }, (_, i) => i + 1));
  },
  120_000,
);
