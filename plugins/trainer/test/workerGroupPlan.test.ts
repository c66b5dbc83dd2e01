import { afterAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { createKernel, DrmasError, resolveConfig, type UserConfig } from '@drmas/core';
import { TfjsBackendPlugin } from '@drmas/plugin-backend-tfjs';
import { planWorkerGroups, TrainerPlugin } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

const project = new TempProject('worker-group-plan');
afterAll(() => project.dispose());

async function plan(config: UserConfig) {
  const { config: resolved } = await resolveConfig({ cwd: process.cwd(), inline: { ...config, plugins: [new TrainerPlugin()] } });
  return planWorkerGroups(resolved);
}

async function failure(config: UserConfig): Promise<DrmasError> {
  try {
    await plan(config);
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a DrmasError');
}

describe('worker groups from models and agents', () => {
  test('shared: agents on one model id share one worker group', async () => {
    const groups = await plan({
      models: { policy: { model: 'tiny' } },
      agents: { solver: { model: 'policy' }, verifier: { model: 'policy' } },
    });
    expect(groups.map((g) => [g.id, g.agents])).toEqual([['policy', ['solver', 'verifier']]]);
    expect(groups[0]!.training).toEqual({
      optimizer: { lr: 1e-4, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, moments: 'float32', paramGroups: [] },
      schedule: { kind: 'constant', warmupSteps: 0 },
      microBatchSize: 8,
      miniBatches: 1,
      epochs: 1,
    });
  });

  test("a model's param groups reach its worker group's training settings", async () => {
    const paramGroups = [{ params: ['model.norm.weight'], lr: 1e-2 }];
    const groups = await plan({ models: { policy: { model: 'tiny', optimizer: { paramGroups } } }, agents: { solver: {} } });
    expect(groups[0]!.training.optimizer.paramGroups).toEqual(paramGroups);
    expect((await plan({ models: { policy: { model: 'tiny' } }, agents: { solver: {} } }))[0]!.training.optimizer.paramGroups).toEqual([]);
  });

  test('non-shared and heterogeneous: one group per model id, each with its own settings', async () => {
    const groups = await plan({
      models: {
        a: { model: 'tiny', architecture: 'Qwen2ForCausalLM', optimizer: { lr: 1e-3 } },
        b: { model: 'tiny', architecture: 'LlamaForCausalLM' },
      },
      agents: { solver: { model: 'a', train: { microBatchSize: 4 } }, verifier: { model: 'b', train: { lr: 5e-4 } } },
    });
    expect(groups.map((g) => [g.id, g.agents, g.settings.architecture, g.training.optimizer.lr, g.training.microBatchSize])).toEqual([
      ['a', ['solver'], 'Qwen2ForCausalLM', 1e-3, 4],
      ['b', ['verifier'], 'LlamaForCausalLM', 5e-4, 8],
    ]);
  });

  test('an agent without a model uses the only model', async () => {
    const groups = await plan({ models: { m: { model: 'tiny' } }, agents: { solver: {}, verifier: {} } });
    expect(groups[0]!.agents).toEqual(['solver', 'verifier']);
  });

  test('shared agents with conflicting training settings name both agents and the setting', async () => {
    const error = await failure({
      models: { policy: { model: 'tiny' } },
      agents: { solver: { model: 'policy', train: { lr: 1e-4 } }, verifier: { model: 'policy', train: { lr: 3e-4 } } },
    });
    expect(error.message).toBe('agents "solver" and "verifier" share model "policy" but set different lr (0.0001 and 0.0003)');
    expect(error.key).toBe('agents.verifier.train.lr');
  });

  test('agents.<role>.train.microBatchTokens reaches the group (unset by default); shared agents must agree on it', async () => {
    const groups = await plan({
      models: { policy: { model: 'tiny' } },
      agents: { solver: { train: { microBatchTokens: 4096 } }, verifier: { train: { microBatchTokens: 4096 } } },
    });
    expect(groups[0]!.training.microBatchTokens).toBe(4096);
    expect((await plan({ models: { policy: { model: 'tiny' } }, agents: { solver: {} } }))[0]!.training).not.toHaveProperty(
      'microBatchTokens',
    );
    const error = await failure({
      models: { policy: { model: 'tiny' } },
      agents: { solver: { train: { microBatchTokens: 4096 } }, verifier: { train: { microBatchTokens: 2048 } } },
    });
    expect(error.key).toBe('agents.verifier.train.microBatchTokens');
  });

  test('an agent naming an undefined model gets a suggestion', async () => {
    const error = await failure({ models: { policy: { model: 'tiny' } }, agents: { solver: { model: 'polcy' } } });
    expect(error.key).toBe('agents.solver.model');
    expect(error.hint).toBe('Did you mean "policy"?');
  });

  test('an agent without a model when there are several', async () => {
    const error = await failure({ models: { a: { model: 'tiny' }, b: { model: 'tiny' } }, agents: { solver: {} } });
    expect(error.key).toBe('agents.solver.model');
    expect(error.hint).toContain('one of a, b');
  });

  test('a schedule and its warm-up reach the group; an unknown schedule is rejected naming the key', async () => {
    const groups = await plan({
      models: { policy: { model: 'tiny', optimizer: { schedule: 'cosine', warmupSteps: 3 } } },
      agents: { solver: {} },
    });
    expect(groups[0]!.training.schedule).toEqual({ kind: 'cosine', warmupSteps: 3 });
    // A JSON config is not type-checked: the schema catches what the types would.
    const untyped = JSON.parse(
      '{ "models": { "policy": { "model": "tiny", "optimizer": { "schedule": "warmup_cosine" } } }, "agents": { "solver": {} } }',
    ) as UserConfig;
    await expect(plan(untyped)).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'models.policy.optimizer.schedule' });
  });

  test('a param group naming no parameter of the model fails at setup, under models.<id>.optimizer.paramGroups.<i>.params', async () => {
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [new TrainerPlugin(), new TfjsBackendPlugin()],
        models: { policy: { model: 'tiny', runtime: 'wasm', optimizer: { paramGroups: [{ params: ['model.nrom.weight'], lr: 1e-2 }] } } },
        agents: { solver: {} },
      },
    });
    const error = await kernel.setup({ runDir: project.path('run') }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(DrmasError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'models.policy.optimizer.paramGroups.0.params' });
    expect((error as Error).message).toMatch(/did you mean "model\.norm\.weight"/);
    await kernel.shutdown();
  });
});

/** `agents.<role>.lora`: validation (PEFT's names and defaults, "Did you mean") and a worker group per LoRA agent. */
const loraModels = { policy: { model: 'tiny', optimizer: { paramGroups: [{ params: ['model.norm.weight'], lr: 1e-2 }] } } };

describe('LoRA agents', () => {
  test('each LoRA agent gets a worker group of its own on the shared model; the others still share one', async () => {
    const groups = await plan({
      models: loraModels,
      agents: {
        solver: { lora: { rank: 4, alpha: 16, targetModules: ['q_proj', 'k_proj', 'q_proj'] } },
        verifier: { lora: {} },
        critic: {},
        judge: {},
      },
    });
    expect(groups.map((g) => [g.id, g.model, g.agents])).toEqual([
      ['policy@solver', 'policy', ['solver']],
      ['policy@verifier', 'policy', ['verifier']],
      ['policy', 'policy', ['critic', 'judge']],
    ]);
    // PEFT's LoraConfig defaults (r 8, lora_alpha 8, lora_dropout 0, q_proj and v_proj for Llama / Qwen); repeats dropped.
    expect(groups.map((g) => g.lora)).toEqual([
      { rank: 4, alpha: 16, dropout: 0, targetModules: ['q_proj', 'k_proj'] },
      { rank: 8, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj'] },
      undefined,
    ]);
    // The model's param groups name base tensors: an adapter trains as one group.
    expect(groups.map((g) => g.training.optimizer.paramGroups.length)).toEqual([0, 0, 1]);
  });

  test('a frozen LoRA agent (trainable: false) is the frozen agent of its own group: its adapter stays at init, the base', async () => {
    const groups = await plan({ models: loraModels, agents: { solver: { lora: {} }, verifier: { lora: {}, trainable: false } } });
    expect(groups.map((g) => [g.id, g.frozenAgents])).toEqual([
      ['policy@solver', []],
      ['policy@verifier', ['verifier']],
    ]);
  });

  test('an unknown target module is refused with its key and the closest name', async () => {
    const error = await failure({ models: loraModels, agents: { solver: { lora: { targetModules: ['q_proj', 'v_prj'] } } } });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('agents.solver.lora.targetModules[1]');
    expect(error.message).toContain('unknown module "v_prj"');
    expect(error.message).toContain('Did you mean "v_proj"');
  });

  test('PEFT key names that are not drmas keys are refused with the drmas name', async () => {
    const error = await failure({ models: loraModels, agents: { solver: { lora: { r: 8 } as never } } });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('agents.solver.lora.r');
    expect(error.message).toContain('rank');
  });

  test('rank, alpha and dropout are range-checked', async () => {
    for (const [lora, key] of [
      [{ rank: 0 }, 'agents.solver.lora.rank'],
      [{ alpha: -1 }, 'agents.solver.lora.alpha'],
      [{ dropout: 1 }, 'agents.solver.lora.dropout'],
    ] as const) {
      const error = await failure({ models: loraModels, agents: { solver: { lora } } });
      expect([error.code, error.key]).toEqual(['CONFIG_INVALID', key]);
    }
  });
});

describe('drmas info on LoRA agents', () => {
  test("names each adapter's settings, its frozen base, and the saved adapter it starts from", async () => {
    const { code, stdout } = await runCli([
      'info',
      '--config',
      'examples/math/lora.config.json',
      '--set',
      'agents.solver.lora.adapter=./runs/old/checkpoints/step-000030/policy@solver',
    ]);
    expect(code).toBe(0);
    const line = (group: string) => stdout.split('\n').find((l) => l.includes(`id: ${group};`))!;
    const settings = 'adapter r=8 alpha=32 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj';
    // A relative path from --set is the working directory's (the config's folder only for paths the file sets).
    expect(line('policy@solver')).toContain(
      `lora: ${settings} over model policy's frozen base, starting from ${path.resolve('runs/old/checkpoints/step-000030/policy@solver')};`,
    );
    expect(line('policy@verifier')).toContain(`lora: ${settings} over model policy's frozen base;`);
  });
});
