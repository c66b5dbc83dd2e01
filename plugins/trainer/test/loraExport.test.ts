import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scoreSequences, type LoraSettings, type PolicyBackend } from '@drmas/core';
import { configJsonFor, initLoraAdapter, loadModelWeights, loraAdapterFiles, saveCheckpoint, SeededRandom } from '@drmas/models';
import { OnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { runCli } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { testSlow } from '../../../test/support/describeSlow.js';
import { randomWeights, tinyConfigJson } from '../../../models/test/modelFixtures.js';
import exportCommand from '../src/cli/exportCommand.js';

/**
 * `drmas export --merge-lora`: a LoRA agent's checkpoint written as a full model. The merged folder, loaded as an
 * ordinary model on onnx, scores every token as the unmerged adapter on its base does (within 1e-5, float32
 * rounding), and not as the base does; the base is found from the run's config.json.
 */

const SETTINGS: LoraSettings = {
  rank: 4,
  alpha: 8,
  dropout: 0,
  targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
};
const PROMPTS = [[5, 40, 7, 10], [12]];
const RESPONSES = [
  [31, 9, 3, 44, 20],
  [30, 4, 11],
];
const THREADS = { intraOpNumThreads: 1 };

const PYTHON = '/usr/bin/python3';
const project = new TempProject('lora-export');
const step = project.path('run/checkpoints/step-000004');
const exportCli = (...args: string[]) => runCli(['export', ...args], project.dir, [exportCommand]);

describe('drmas export --merge-lora', () => {
  beforeAll(async () => {
    // A run on a small random Qwen2, with the solver's and the verifier's adapters at step 4. B is random: PEFT's
    // zero B would make the merge the base itself.
    const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 3);
    await saveCheckpoint(project.path('base'), { config: configJsonFor(config), tensors: weights });
    project.write({ 'run/config.json': { models: { policy: { model: project.path('base') } }, trainer: { seed: 0 } } });
    for (const [role, seed] of [
      ['solver', 1],
      ['verifier', 2],
    ] as const) {
      const rng = new SeededRandom(seed);
      const adapter = initLoraAdapter(config, SETTINGS, rng);
      for (const [name, t] of adapter)
        if (name.endsWith('lora_B.weight')) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.normal() * 0.05;
      for (const [file, data] of Object.entries(loraAdapterFiles(path.join(step, `policy@${role}`), SETTINGS, adapter))) {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, data);
      }
    }
  });
  afterAll(() => project.dispose());

  it('the merged model scores as the unmerged adapter within 1e-5, and unlike the base', async () => {
    const out = project.path('solver-merged');
    const result = await exportCli('--merge-lora', step, '--role', 'solver', '--out', out);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('policy@solver (r=4, lora_alpha=8,');

    const base = await loadModelWeights({ model: project.path('base') });
    const adapted = await OnnxPolicyBackend.create(base.config, base.weights, undefined, {
      provider: 'cpu',
      sessionOptions: THREADS,
      lora: { settings: SETTINGS },
    });
    await adapted.load(path.join(step, 'policy@solver'));
    const mergedWeights = await loadModelWeights({ model: out });
    const merged = await OnnxPolicyBackend.create(mergedWeights.config, mergedWeights.weights, undefined, {
      provider: 'cpu',
      sessionOptions: THREADS,
    });
    const plain = await OnnxPolicyBackend.create(base.config, base.weights, undefined, { provider: 'cpu', sessionOptions: THREADS });
    const scores = async (engine: PolicyBackend) => (await scoreSequences(engine, PROMPTS, RESPONSES)).logProbs.flat();
    const [a, m, b] = [await scores(adapted), await scores(merged), await scores(plain)];
    const maxDiff = (x: number[], y: number[]) => Math.max(...x.map((v, i) => Math.abs(v - y[i]!)));
    expect(maxDiff(a, m)).toBeLessThan(1e-5);
    expect(maxDiff(a, b)).toBeGreaterThan(1e-3);
    for (const engine of [adapted, merged, plain]) engine.dispose();
  });

  it('names the option at fault: --merge-lora, --role among several adapters, an unknown role', async () => {
    const missing = await exportCli(step, '--role', 'solver', '--out', project.path('x'));
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('error INVALID_ARGUMENT (--merge-lora)')]);
    const several = await exportCli('--merge-lora', step, '--out', project.path('x'));
    expect(several.stderr).toContain('error INVALID_ARGUMENT (--role): ');
    expect(several.stderr).toContain('holds the adapters of solver, verifier');
    const typo = await exportCli('--merge-lora', step, '--role', 'solvr', '--out', project.path('x'));
    expect(typo.stderr).toContain('holds no adapter of role "solvr"');
    expect(typo.stderr).toContain('Did you mean "solver"?');
  });

  // test/reference/peft_merge.py reads the three folders' safetensors by hand and merges by PEFT's rule in float64.
  testSlow('an independent Python reading of the PEFT files merges to the exported weights (one float32 rounding)', async () => {
    const torch = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
    if (torch.status !== 0) {
      console.warn(
        `the PEFT merge check in Python is skipped: ${PYTHON} with torch is not available (${torch.error?.message ?? torch.stderr.trim()})`,
      );
      return;
    }
    const out = project.path('verifier-merged');
    expect((await exportCli('--merge-lora', path.join(step, 'policy@verifier'), '--out', out)).code).toBe(0);
    const script = fileURLToPath(new URL('reference/peft_merge.py', import.meta.url));
    const result = spawnSync(PYTHON, [script, path.join(step, 'policy@verifier'), project.path('base'), out], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as Record<string, number | boolean>;
    // 2 layers x 7 modules merged; every other tensor bitwise the base's; at most half a float32 ulp (2^-24) off.
    expect(report).toMatchObject({ modules: 14, others_equal: true });
    expect(report.max_rel_diff).toBeLessThanOrEqual(2 ** -24);
  });
});
