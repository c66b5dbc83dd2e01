import { afterAll, describe, expect, test } from '@jest/globals';
import {
  BackendFactory,
  createKernel,
  DrmasError,
  InfoSection,
  WorkerGroups,
  type Plugin,
  type PolicyBackend,
  type UserConfig,
} from '@drmas/core';
import { createOnnxBackendFactory, ONNXRUNTIME_INSTALL, OnnxBackendPlugin, OnnxRuntimeUnavailableError } from '@drmas/plugin-backend-onnx';
import { tfjsBackendFactory, TfjsBackendPlugin } from '@drmas/plugin-backend-tfjs';
import { TrainerPlugin, type TrainedWorkerGroup } from '../src/index.js';
import { TempProject } from '../../../test/support/tempProject.js';

const onnxBackendFactory = createOnnxBackendFactory();

const project = new TempProject('rollout-engine');
afterAll(() => project.dispose());

/** A backend that holds no model: enough for worker groups to be built around it. */
function stubBackend(name: string): PolicyBackend {
  return {
    name,
    runtime: 'stub',
    tokenizer: undefined,
    parameterNames: () => [],
    syncWeights: async () => {},
    dispose: () => {},
  } as unknown as PolicyBackend;
}

interface StubEngine {
  name: string;
  /** Rank for `auto`; absent: chosen only by name. */
  priority?: number;
  /** Whether it trains (and with LoRA adapters); default: it samples only. */
  trains?: boolean;
  lora?: boolean;
  /** Whether it holds AdamW's moments in 8 bits. */
  moments8bit?: boolean;
  /** Why it is unavailable; absent: available. */
  missing?: string;
}

/** Registers stub engines and counts what each is asked. */
function stubEngines(engines: StubEngine[]) {
  const created: string[] = [];
  const probes: Record<string, number> = {};
  const plugin: Plugin = {
    name: 'stub-engines',
    register(ctx) {
      for (const engine of engines) {
        const factory: BackendFactory = {
          name: engine.name,
          capabilities: [
            'sample',
            ...(engine.trains ? (['score', 'train'] as const) : []),
            ...(engine.lora ? (['lora'] as const) : []),
            ...(engine.moments8bit ? (['moments8bit'] as const) : []),
          ],
          priority: engine.priority === undefined ? undefined : () => engine.priority!,
          probe: async () => {
            probes[engine.name] = (probes[engine.name] ?? 0) + 1;
            return engine.missing;
          },
          create: async ({ modelId }) => {
            created.push(`${engine.name}:${modelId}`);
            return stubBackend(`${engine.name}:${modelId}`);
          },
        };
        ctx.provide(BackendFactory, engine.name, factory);
      }
    },
    apply() {},
  };
  return { plugin, created, probes };
}

async function setup(
  plugins: Plugin[],
  config: UserConfig,
): Promise<{ groups: TrainedWorkerGroup[]; log: string[]; info: Array<Record<string, unknown>> }> {
  const { kernel } = await createKernel({ cwd: process.cwd(), inline: { ...config, plugins: [new TrainerPlugin(), ...plugins] } });
  const info = kernel
    .getAll(InfoSection)
    .find((s) => s.title === 'workerGroups')!
    .describe(kernel) as Array<Record<string, unknown>>;
  const log: string[] = [];
  try {
    await kernel.setup({ runDir: project.path('run'), log: (m) => log.push(m) });
    return { groups: kernel.get(WorkerGroups).all() as TrainedWorkerGroup[], log, info };
  } finally {
    await kernel.shutdown();
  }
}

async function setupError(plugins: Plugin[], config: UserConfig): Promise<DrmasError> {
  const error = await setup(plugins, config).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!DrmasError.is(error)) throw new Error(`expected a DrmasError, got ${String(error)}`);
  return error;
}

const ONE_GROUP = (rollout: string, backend = 'trainer-engine'): UserConfig => ({
  models: { policy: { backend, rollout, model: 'tiny' } },
  agents: { solver: { model: 'policy' } },
});

describe('models.<id>.rollout: auto', () => {
  test('picks the available engine of highest priority, saying which it skipped', async () => {
    const engines = stubEngines([
      { name: 'trainer-engine', priority: 10 },
      { name: 'fast', priority: 30 },
      { name: 'faster', priority: 40, missing: 'libfaster is not installed' },
    ]);
    const { groups, log, info } = await setup([engines.plugin], ONE_GROUP('auto'));
    expect(groups[0]!.rollout.name).toBe('fast:policy');
    expect(groups[0]!.trainer.name).toBe('trainer-engine:policy');
    expect(log).toContain('rollout engine of policy (models.policy.rollout: auto): fast; skipped faster: libfaster is not installed');
    expect(info[0]!.rollout).toBe('auto (faster, else fast, else trainer-engine)');
  });

  test("falls back to the trainer's engine when nothing ranked above it is available, saying why", async () => {
    const engines = stubEngines([
      { name: 'trainer-engine', priority: 10 },
      { name: 'fast', priority: 20, missing: 'libfast is not installed (npm install libfast)' },
    ]);
    const { groups, log } = await setup([engines.plugin], ONE_GROUP('auto'));
    expect(groups[0]!.rollout).toBe(groups[0]!.trainer);
    expect(log).toContain(
      "rollout engine of policy (models.policy.rollout: auto): trainer-engine, the trainer's engine; skipped fast: libfast is not installed (npm install libfast)",
    );
    expect(engines.created).toEqual(['trainer-engine:policy']);
  });

  test('engines without a priority (a scripted teacher) are never picked; the trainer samples', async () => {
    const engines = stubEngines([{ name: 'trainer-engine' }, { name: 'teacher' }]);
    const { groups, info } = await setup([engines.plugin], ONE_GROUP('auto'));
    expect(groups[0]!.rollout).toBe(groups[0]!.trainer);
    expect(info[0]!.rollout).toBe('trainer-engine');
  });

  test('each worker group chooses; a probe answers every group', async () => {
    const engines = stubEngines([
      { name: 'trainer-engine', priority: 10 },
      { name: 'fast', priority: 20 },
    ]);
    const { groups } = await setup([engines.plugin], {
      models: {
        a: { backend: 'trainer-engine', rollout: 'auto', model: 'tiny' },
        b: { backend: 'trainer-engine', rollout: 'auto', model: 'tiny' },
      },
      agents: { solver: { model: 'a' }, verifier: { model: 'b' } },
    });
    expect(groups.map((g) => g.rollout.name)).toEqual(['fast:a', 'fast:b']);
  });
});

describe('models.<id>.backend: auto (the default)', () => {
  const NO_BACKEND: UserConfig = { models: { policy: { model: 'tiny' } }, agents: { solver: { model: 'policy' } } };

  test('trains on the available engine of highest training rank, saying which it skipped; engines that do not train are passed over', async () => {
    const engines = stubEngines([
      { name: 'teacher' },
      { name: 'sampler', priority: 40 },
      { name: 'slow', priority: 10, trains: true },
      { name: 'fast', priority: 20, trains: true },
      { name: 'gpu', priority: 30, trains: true, missing: 'no GPU' },
    ]);
    const { groups, log, info } = await setup([engines.plugin], NO_BACKEND);
    expect(groups[0]!.trainer.name).toBe('fast:policy');
    expect(groups[0]!.rollout).toBe(groups[0]!.trainer);
    expect(log).toContain(
      'training engine of policy (models.policy.backend: auto): fast; skipped sampler: cannot train; skipped gpu: no GPU',
    );
    expect(info[0]!.backend).toBe('auto (gpu, else fast, else slow)');
    expect(engines.created).toEqual(['fast:policy']);
  });

  test('no engine that trains available: CONFIG_INVALID at models.<id>.backend with each reason', async () => {
    const engines = stubEngines([{ name: 'teacher' }, { name: 'fast', priority: 20, trains: true, missing: 'libfast is not installed' }]);
    const error = await setupError([engines.plugin], NO_BACKEND);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('models.policy.backend');
    expect(error.message).toBe(
      'no engine here can train for this model:\n  - fast: libfast is not installed\n  - teacher: cannot train [plugin trainer, hook setup]',
    );
  });

  test('a LoRA agent trains on the best engine that trains adapters, the others skipped for lacking them', async () => {
    const engines = stubEngines([
      { name: 'gpu', priority: 30, trains: true },
      { name: 'cpu', priority: 20, trains: true, lora: true },
    ]);
    const { groups, log } = await setup([engines.plugin], {
      ...NO_BACKEND,
      agents: { solver: { model: 'policy', lora: { rank: 2 } } },
    });
    expect(groups[0]!.trainer.name).toBe('cpu:policy');
    expect(log).toContain('training engine of policy@solver (models.policy.backend: auto): cpu; skipped gpu: cannot train LoRA adapters');
  });

  test('8-bit moments train on the best engine that holds them; an engine named that cannot is refused at setup', async () => {
    const engines = stubEngines([
      { name: 'gpu', priority: 30, trains: true },
      { name: 'cpu', priority: 20, trains: true, moments8bit: true },
    ]);
    const config: UserConfig = { ...NO_BACKEND, models: { policy: { model: 'tiny', optimizer: { moments: '8bit' } } } };
    const { groups, log } = await setup([engines.plugin], config);
    expect(groups[0]!.trainer.name).toBe('cpu:policy');
    expect(log).toContain(
      "training engine of policy (models.policy.backend: auto): cpu; skipped gpu: cannot hold AdamW's moments in 8 bits (optimizer.moments: 8bit)",
    );
    const error = await setupError([engines.plugin], {
      ...config,
      models: { policy: { model: 'tiny', optimizer: { moments: '8bit' }, backend: 'gpu' } },
    });
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'models.policy.backend' });
    expect(error.message).toContain(`engine "gpu" cannot hold AdamW's moments in 8 bits`);
  });

  test('the real engines rank onnx above tfjs on a CPU runtime, tfjs first on tfjs-node-gpu', () => {
    const onnx = onnxBackendFactory.priority!({ runtime: 'auto' });
    expect(tfjsBackendFactory.priority!({ runtime: 'wasm' })).toBeLessThan(onnx);
    expect(tfjsBackendFactory.priority!({ runtime: 'tfjs-node' })).toBeLessThan(onnx);
    expect(tfjsBackendFactory.priority!({ runtime: 'tfjs-node-gpu' })).toBeGreaterThan(onnx);
  });
});

describe('an explicitly named rollout engine', () => {
  test('that is unavailable fails at setup, naming models.<id>.rollout and the reason, before any model loads', async () => {
    const engines = stubEngines([
      { name: 'trainer-engine', priority: 10 },
      { name: 'fast', priority: 20, missing: 'libfast is not installed' },
    ]);
    const error = await setupError([engines.plugin], ONE_GROUP('fast'));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('models.policy.rollout');
    expect(error.message).toContain('libfast is not installed');
    expect(error.hint).toContain('models.policy.rollout: auto');
    expect(engines.created).toEqual([]);
  });

  test('that is available samples, as before', async () => {
    const engines = stubEngines([
      { name: 'trainer-engine', priority: 10 },
      { name: 'fast', priority: 20 },
    ]);
    const { groups, info } = await setup([engines.plugin], ONE_GROUP('fast'));
    expect(groups[0]!.rollout.name).toBe('fast:policy');
    expect(info[0]!.rollout).toBe('fast');
  });

  test('an unavailable trainer engine fails with models.<id>.backend', async () => {
    const engines = stubEngines([{ name: 'trainer-engine', missing: 'no accelerator' }]);
    expect((await setupError([engines.plugin], ONE_GROUP('trainer-engine'))).key).toBe('models.policy.backend');
  });

  test('a rollout engine that samples on a server, named for a model without one, is refused before any model loads', async () => {
    const engines = stubEngines([{ name: 'trainer-engine', priority: 10, trains: true }]);
    const server: Plugin = {
      name: 'server-engine',
      register: (ctx) =>
        ctx.provide(BackendFactory, 'served', {
          name: 'served',
          capabilities: ['sample'],
          refuses: () => 'it samples on a server, and models.<id>.rollout names none',
          create: () => Promise.reject(new Error('not reached')),
        }),
    };
    const error = await setupError([engines.plugin, server], ONE_GROUP('served'));
    expect([error.code, error.key, error.message]).toEqual([
      'CONFIG_INVALID',
      'models.policy.rollout',
      'engine "served" refuses this model: it samples on a server, and models.<id>.rollout names none [plugin trainer, hook setup]',
    ]);
    expect(error.hint).toBe('name one that can (trainer-engine), or give models.policy.rollout: auto to take the best available');
    expect(engines.created).toEqual([]);
  });
});

describe('auto on the real engines (tiny model)', () => {
  const config: UserConfig = {
    models: { policy: { model: 'tiny', runtime: 'wasm', rollout: 'auto' } },
    agents: { solver: { model: 'policy' } },
  };
  const onTfjs: UserConfig = { ...config, models: { policy: { ...config.models!.policy!, backend: 'tfjs' } } };

  test('onnx trains and samples when onnxruntime-node loads (no backend key)', async () => {
    const { groups, log, info } = await setup([new TfjsBackendPlugin(), new OnnxBackendPlugin()], config);
    expect(groups[0]!.trainer.name).toBe('onnx:policy');
    expect(groups[0]!.rollout).toBe(groups[0]!.trainer);
    expect(log).toContain('training engine of policy (models.policy.backend: auto): onnx');
    expect(info[0]!.backend).toBe('auto (onnx, else tfjs)');
  });

  test('backend: tfjs trains on tfjs, and onnx samples when onnxruntime-node loads', async () => {
    const { groups, log, info } = await setup([new TfjsBackendPlugin(), new OnnxBackendPlugin()], onTfjs);
    expect(groups[0]!.rollout.name).toBe('onnx:policy');
    expect(groups[0]!.trainer.name).toBe('tfjs:policy');
    expect(log).toContain('rollout engine of policy (models.policy.rollout: auto): onnx');
    expect(info[0]!.rollout).toBe('auto (onnx, else tfjs)');
  });

  test('without onnxruntime-node, tfjs samples and the log says how to install it', async () => {
    const notInstalled = new OnnxRuntimeUnavailableError(
      new Error("Cannot find package 'onnxruntime-node' imported from /x/y.js"),
      ONNXRUNTIME_INSTALL,
    );
    const onnxWithoutRuntime: Plugin = {
      name: 'backend-onnx',
      register: (ctx) => ctx.provide(BackendFactory, 'onnx', { ...onnxBackendFactory, probe: async () => notInstalled.message }),
      apply() {},
    };
    const { groups, log } = await setup([new TfjsBackendPlugin(), onnxWithoutRuntime], config);
    expect(groups[0]!.trainer.name).toBe('tfjs:policy');
    expect(groups[0]!.rollout).toBe(groups[0]!.trainer);
    const reason = 'onnxruntime-node is not installed (ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0)';
    expect(log).toContain(`training engine of policy (models.policy.backend: auto): tfjs; skipped onnx: ${reason}`);
    expect(log).toContain(`rollout engine of policy (models.policy.rollout: auto): tfjs, the trainer's engine; skipped onnx: ${reason}`);
  });
});
