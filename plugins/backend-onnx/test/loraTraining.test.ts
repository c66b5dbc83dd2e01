import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseModelConfig, readSafetensorsHeader } from '@drmas/models';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { runBin } from '../../../test/support/cliRunner.js';
import { lines, train, withoutTimings } from './trainingRuns.js';

/**
 * The math preset with LoRA agents, trained from the built CLI: the solver and the verifier each train an adapter of
 * their own (worker groups `policy@solver`, `policy@verifier`) on the preset's base, their checkpoints are PEFT
 * adapter folders with the tensor names PEFT writes, and a resume from the step-1 checkpoint gives the uninterrupted
 * run's step 2 exactly. (About 20 s: the fast tests of the same behaviour are in lora.test.ts.) Under `trainer.roleSwap` the two agents
 * swap adapters at the swapped step.
 */

const project = new TempProject('onnx-lora-training');
const CONFIG = path.resolve('examples/math/drmas.config.json');
const RUN = [
  'train',
  '--config',
  CONFIG,
  ...['trainer.steps=2', 'trainer.saveEvery=1', 'eval.atStart=false', 'eval.atEnd=false', 'rollout.promptsPerStep=4'],
  ...['models.policy.backend=onnx', 'models.policy.threads=2', 'agents.solver.lora.rank=4', 'agents.solver.train.lr=1e-3'],
  ...['agents.verifier.lora.targetModules=["q_proj","v_proj","o_proj","down_proj"]', 'agents.verifier.train.lr=1e-3'],
].flatMap((arg, i) => (i >= 3 ? ['--set', arg] : [arg]));

describeSlow('the math preset with LoRA agents on onnx', () => {
  const run = project.path('run');
  beforeAll(() => train([...RUN, '--run-dir', run]), 120_000);
  afterAll(() => project.dispose());

  test('each agent trains its own adapter and checkpoints it in the PEFT layout', async () => {
    const [step1] = lines(run);
    for (const group of ['policy@solver', 'policy@verifier']) expect(step1![`actor/${group}/grad_norm`]).toBeGreaterThan(0);
    const checkpoint = path.join(run, 'checkpoints', 'step-000002');
    const config = parseModelConfig(
      JSON.parse(readFileSync(path.join(checkpoint, 'policy@verifier', 'config.json'), 'utf8')) as Record<string, unknown>,
    );
    // The frozen base stays where it was loaded from: no weights file of its own beside the adapter.
    expect(existsSync(path.join(checkpoint, 'policy@verifier', 'model.safetensors'))).toBe(false);
    const header = await readSafetensorsHeader(path.join(checkpoint, 'policy@verifier', 'adapter_model.safetensors'));
    const expected: string[] = [];
    for (let layer = 0; layer < config.numLayers; layer++) {
      for (const m of ['self_attn.q_proj', 'self_attn.v_proj', 'self_attn.o_proj', 'mlp.down_proj'])
        for (const ab of ['A', 'B']) expected.push(`base_model.model.model.layers.${layer}.${m}.lora_${ab}.weight`);
    }
    expect([...header.tensors.keys()].sort()).toEqual(expected.sort());
    const adapterConfig = JSON.parse(readFileSync(path.join(checkpoint, 'policy@solver', 'adapter_config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(adapterConfig).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: ['q_proj', 'v_proj'] });
  });

  test('agents.<role>.lora.adapter starts an agent from a saved adapter; one whose settings differ is refused at that key', async () => {
    const saved = path.join(run, 'checkpoints', 'step-000002', 'policy@solver');
    const started = project.path('from-adapter');
    // A frozen agent: the adapter the run saves is the one it started from, if it was loaded.
    train([
      ...RUN,
      ...['--set', `agents.solver.lora.adapter=${saved}`, '--set', 'agents.solver.trainable=false', '--set', 'trainer.steps=1'],
      ...['--run-dir', started],
    ]);
    const file = (dir: string) => readFileSync(path.join(dir, 'adapter_model.safetensors'));
    const after = path.join(started, 'checkpoints', 'step-000001', 'policy@solver');
    expect(file(after).equals(file(saved))).toBe(true);
    // PEFT's init (B = 0) is not what the earlier run trained: the comparison above can fail.
    expect(file(path.join(started, 'checkpoints', 'step-000001', 'policy@verifier')).equals(file(saved))).toBe(false);

    const refused = runBin([...RUN, '--set', `agents.verifier.lora.adapter=${saved}`, '--run-dir', project.path('refused')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /CHECKPOINT_INVALID \(.*agents\.verifier\.lora\.adapter\): .*saved with other settings \(r=4, lora_alpha=8, lora_dropout=0, target_modules=q_proj,v_proj\) than this agent's lora \(r=8, lora_alpha=8, lora_dropout=0, target_modules=q_proj,v_proj,o_proj,down_proj\)/,
    );
  });

  test("a resume from step 1's checkpoint gives the uninterrupted run's step 2", () => {
    const copy = project.path('resumed');
    cpSync(run, copy, { recursive: true });
    train([...RUN, '--resume', path.join(copy, 'checkpoints', 'step-000001')]);
    expect(withoutTimings(lines(copy)[1]!)).toEqual(withoutTimings(lines(run)[1]!));
  });
});

describeSlow('LoRA agents under trainer.roleSwap (CORY)', () => {
  test("a two-step run swaps the two agents' adapters at step 2 (the metric and the run log say so)", () => {
    const run = project.path('swap');
    const swap = ['trainer.roleSwap={"roles":["solver","verifier"],"swapEvery":1}', 'trainer.steps=2', 'trainer.saveEvery=0'];
    const result = runBin([...RUN, ...swap.flatMap((arg) => ['--set', arg]), '--run-dir', run]);
    expect(result.code).toBe(0);
    expect(lines(run).map((line) => line['roleSwap/swapped'])).toEqual([0, 1]);
    expect(result.stderr).toContain(
      'step 2: solver now plays on model policy@verifier and verifier on model policy@solver (trainer.roleSwap)',
    );
  });
});

describeSlow('LoRA agents with critics of their own (IPPO)', () => {
  const CRITIC = [...RUN, '--set', 'algorithm.advantage=gae', '--set', 'critic.learner=ippo'];
  const run = project.path('ippo');
  beforeAll(() => train([...CRITIC, '--run-dir', run]), 120_000);

  test("each role's critic learns beside its adapter, both checkpointed, and a resume from step 1 gives step 2", () => {
    const [step1] = lines(run);
    for (const role of ['solver', 'verifier']) {
      expect(step1![`critic/${role}/vf_loss`]).toBeGreaterThan(0);
      expect(step1![`critic/${role}/updates`]).toBe(1);
      expect(step1![`actor/policy@${role}/grad_norm`]).toBeGreaterThan(0);
      const checkpoint = path.join(run, 'checkpoints', 'step-000001');
      expect(existsSync(path.join(checkpoint, 'critics', role, 'value_head.safetensors'))).toBe(true);
      expect(existsSync(path.join(checkpoint, `policy@${role}`, 'adapter_model.safetensors'))).toBe(true);
    }
    const copy = project.path('ippo-resumed');
    cpSync(run, copy, { recursive: true });
    train([...CRITIC, '--resume', path.join(copy, 'checkpoints', 'step-000001')]);
    // Bit for bit: the critics' own trunks (read from the bfloat16 base) are saved in float32.
    expect(withoutTimings(lines(copy)[1]!)).toEqual(withoutTimings(lines(run)[1]!));
  });

  test("a critic that would share a LoRA agent's trunk is refused at critic.shareTrunk", () => {
    const refused = runBin([...CRITIC, '--set', 'critic.shareTrunk=true', '--run-dir', project.path('shared-trunk')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /CONFIG_INVALID \(.*critic\.shareTrunk\): critic solver cannot share the trunk of onnx:policy@solver, which trains a LoRA adapter/,
    );
  });
});
