import { afterAll, describe, expect, test } from '@jest/globals';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, HOOK_NAMES, type Kernel } from '@drmas/core';
import { runBin } from './support/cliRunner.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';
import { readMetricLines } from './support/runFiles.js';

const example = path.join(REPO_ROOT, 'examples', 'custom-plugin');
const scratch = new TempProject('e2e');
afterAll(() => scratch.dispose());

/** Records `hook:tap` for every tap call of every hook, via tapable's interceptors. */
function traceTaps(kernel: Kernel): string[] {
  const calls: string[] = [];
  for (const name of HOOK_NAMES) {
    (kernel.hooks[name] as unknown as { intercept(i: object): void }).intercept({
      tap: (tap: { name: string }) => {
        calls.push(`${name}:${tap.name}`);
      },
    });
  }
  return calls;
}

/** The metrics lines of a run without the wall-clock and memory keys (`timing/*`, `perf/*`), which differ between any two runs. */
function withoutTimings(lines: Array<Record<string, number>>): Array<Record<string, number>> {
  return lines.map((line) => Object.fromEntries(Object.entries(line).filter(([key]) => !/^(timing|perf)\//.test(key))));
}

describe('examples/custom-plugin', () => {
  test('createKernel(config).run() trains as `drmas train` does: the same files and the same metrics lines', async () => {
    const fromCli = scratch.path('same-cli');
    expect(runBin(['train', '--config', 'examples/custom-plugin/drmas.config.json', '--run-dir', fromCli]).code).toBe(0);
    const fromCode = scratch.path('same-code');
    const { kernel } = await createKernel({ cwd: REPO_ROOT, configPath: 'examples/custom-plugin/drmas.config.json' });
    const run = await kernel.run({ runDir: fromCode, log: () => {} });
    expect(run.runDir).toBe(fromCode);
    expect(readdirSync(fromCode).sort()).toEqual(readdirSync(fromCli).sort());
    const cli = withoutTimings(readMetricLines(fromCli));
    expect(cli).toHaveLength(20);
    expect(withoutTimings(readMetricLines(fromCode))).toEqual(cli);
  });

  test("run() without a run directory writes <trainer.outputDir>/<trainer.runName> from the kernel's folder", async () => {
    const project = new TempProject('default-run-dir');
    try {
      cpSync(path.join(example, 'index.js'), project.path('bandit.js'));
      project.write({ 'drmas.config.json': { plugins: ['./bandit.js'], trainer: { steps: 2, outputDir: 'out', runName: 'first' } } });
      const { kernel } = await createKernel({ cwd: project.dir });
      const logs: string[] = [];
      const run = await kernel.run({ log: (m) => logs.push(m) });
      expect(run.runDir).toBe(project.path('out', 'first'));
      expect(readMetricLines(run.runDir).map((l) => l.step)).toEqual([1, 2]);
      expect(logs[0]).toBe(`config ${project.path('drmas.config.json')}; 2 steps; run directory ${project.path('out', 'first')}`);
    } finally {
      project.dispose();
    }
  });

  test('`drmas train --config examples/custom-plugin/drmas.config.json --set trainer.steps=3` writes three metrics lines', () => {
    const runDir = scratch.path('example-run');
    const result = runBin([
      'train',
      '--config',
      'examples/custom-plugin/drmas.config.json',
      '--set',
      'trainer.steps=3',
      '--run-dir',
      runDir,
    ]);
    expect(result.stderr).toContain('3 steps');
    expect(result.code).toBe(0);
    const lines = readMetricLines(runDir);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3]);
    for (const line of lines) {
      expect(line['outcome/mean']).toBeGreaterThan(0);
      expect(line['actor/proposer/grad_norm']).toBeGreaterThanOrEqual(0);
      expect(line['timing/update']).toBeGreaterThanOrEqual(0);
    }
  });

  test('the bandit agents learn: the best arm becomes likelier over the default 20 steps', () => {
    const runDir = scratch.path('learning-run');
    expect(runBin(['train', '--config', 'examples/custom-plugin/drmas.config.json', '--run-dir', runDir]).code).toBe(0);
    const lines = readMetricLines(runDir);
    expect(lines).toHaveLength(20);
    // Uniform start over 4 arms gives 0.25; policy gradient on payoffs (0.25, 0.5, 0.75, 1) must raise it.
    expect(lines[19]?.['bandit/proposer/p_best_arm']).toBeGreaterThan(0.4);
    expect(lines[19]?.['bandit/checker/p_best_arm']).toBeGreaterThan(0.4);
  });

  describe('copied into node_modules under a new name', () => {
    const project = scratch;
    cpSync(example, project.path('node_modules', 'drmas-plugin-copied-bandit'), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}runs`),
    });
    const manifest = project.path('node_modules', 'drmas-plugin-copied-bandit', 'package.json');
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>;
    project.write({
      'node_modules/drmas-plugin-copied-bandit/package.json': { ...pkg, name: 'drmas-plugin-copied-bandit', version: '9.9.9' },
      'drmas.config.yaml':
        'plugins:\n  - [copied-bandit, { arms: 3, agents: [solo], groups: 1, samplesPerGroup: 4 }]\ntrainer:\n  steps: 2\n',
    });

    test('loads by its name, with options, and its taps run in loop order each step', async () => {
      const { kernel } = await createKernel({ cwd: project.dir });
      const loaded = kernel.plugins.find((p) => p.packageName === 'drmas-plugin-copied-bandit');
      expect(loaded?.version).toBe('9.9.9');
      expect(loaded?.plugin.options).toMatchObject({ arms: 3, agents: ['solo'], groups: 1, samplesPerGroup: 4 });
      const calls = traceTaps(kernel);
      await kernel.run({ runDir: project.path('traced-run') });
      const ours = calls.filter((c) => c.endsWith(':bandit') && !c.startsWith('setup'));
      const oneStep = ['beforeStep', 'rollout', 'reward', 'advantage', 'update', 'afterStep'].map((h) => `${h}:bandit`);
      expect(ours).toEqual([...oneStep, ...oneStep]);
      expect(readMetricLines(project.path('traced-run'))).toHaveLength(2);
    });

    test('and from the drmas bin', () => {
      const runDir = project.path('bin-run');
      const result = runBin(['train', '--run-dir', runDir], project.dir);
      expect(result.code).toBe(0);
      expect(readMetricLines(runDir).map((l) => Object.keys(l).filter((k) => k.startsWith('bandit/solo')))).toEqual([
        ['bandit/solo/p_best_arm'],
        ['bandit/solo/p_best_arm'],
      ]);
    });
  });
});
