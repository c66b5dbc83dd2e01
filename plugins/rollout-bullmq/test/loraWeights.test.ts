import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdir, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { scoreSequences, type LoraSettings, type PolicyBackend } from '@drmas/core';
import { initLoraAdapter, loraAdapterFiles, SeededRandom } from '@drmas/models';
import { OnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { TempProject } from '../../../test/support/tempProject.js';
import { randomWeights, tinyConfigJson } from '../../../models/test/modelFixtures.js';
import { WeightsPublisher } from '../src/index.js';

/**
 * Rollout workers of a run with LoRA agents: the trainer publishes a LoRA group's weights through its engine's own
 * `save` (the adapter alone, in PEFT's layout), and a worker's engine for that agent, made on the same base with
 * another init, samples and scores as the trainer's once it loads the release (what `RolloutWorker` does per job).
 */

const SETTINGS: LoraSettings = { rank: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj', 'down_proj'] };
const THREADS = { intraOpNumThreads: 1 };
const project = new TempProject('bullmq-lora');
afterAll(() => project.dispose());

describe('published weights of a LoRA agent', () => {
  it("carry the adapter alone, and a worker's engine that loads them scores as the trainer's", async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 4);
    const engine = (seed: number) =>
      OnnxPolicyBackend.create(config, weights, undefined, {
        provider: 'cpu',
        sessionOptions: THREADS,
        lora: { settings: SETTINGS, seed },
      });
    // The trainer's adapter as after some training: B random (PEFT's zero B would equal any worker's fresh init).
    const rng = new SeededRandom(9);
    const adapter = initLoraAdapter(config, SETTINGS, rng);
    for (const [name, t] of adapter)
      if (name.endsWith('lora_B.weight')) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.normal() * 0.1;
    for (const [file, data] of Object.entries(loraAdapterFiles(project.path('trained'), SETTINGS, adapter))) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, data);
    }
    const [trainer, worker] = [await engine(1), await engine(2)];
    await trainer.load(project.path('trained'));

    const release = await new WeightsPublisher(project.path('run')).publish(3, [
      { id: 'policy@solver', agents: ['solver'], trainer, rollout: trainer, codec: undefined },
    ]);
    const dir = release.paths['policy@solver']!;
    expect(dir).toBe(project.path('run/weights/policy@solver/v3'));
    // No base tensor travels (no weights file at all): the worker has the base already.
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['adapter_config.json', 'adapter_model.safetensors']));
    expect(readdirSync(dir)).not.toContain('model.safetensors');

    const scores = async (e: PolicyBackend) =>
      (
        await scoreSequences(
          e,
          [[5, 40, 7], [12]],
          [
            [31, 9, 3, 44],
            [30, 4, 11],
          ],
        )
      ).logProbs.flat();
    const before = await scores(worker);
    await worker.load(dir);
    const trained = await scores(trainer);
    expect(await scores(worker)).toEqual(trained);
    expect(before).not.toEqual(trained);
    for (const e of [trainer, worker]) e.dispose();
  });
});
