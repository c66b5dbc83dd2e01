import { describe, expect, test } from '@jest/globals';
import {
  BackendFactory,
  DrmasError,
  Engines,
  EnginesPlugin,
  Kernel,
  type AbsentPlugin,
  type EngineCapability,
  type EngineRequest,
  type ResolvedConfig,
} from '@drmas/core';

const CONFIG: ResolvedConfig = {
  presets: [],
  plugins: [],
  models: {},
  agents: {},
  algorithm: {},
  trainer: { steps: 1, seed: 0, outputDir: 'runs', saveEvery: 0, keepLast: 3 },
  eval: { every: 0, atEnd: false, atStart: false },
  env: { seed: 0 },
};

interface Stub {
  name: string;
  capabilities: EngineCapability[];
  /** Absent: chosen only by name. A function of `settings.runtime` when given as a map. */
  priority?: number | Record<string, number>;
  /** Why it does not load. */
  missing?: string;
  refuses?: string;
  remote?: boolean;
  location?: string;
}

/** A kernel whose only plugins are the engine service and `stubs`; `probes` counts each engine's probe calls. */
function engines(stubs: Stub[], absentPlugins: AbsentPlugin[] = []): { engines: Engines; probes: Record<string, number> } {
  const probes: Record<string, number> = {};
  const kernel = new Kernel({ absentPlugins });
  const factories: BackendFactory[] = stubs.map((stub) => ({
    name: stub.name,
    capabilities: stub.capabilities,
    priority:
      stub.priority === undefined
        ? undefined
        : (settings) => (typeof stub.priority === 'number' ? stub.priority : stub.priority![settings.runtime as string]!),
    probe: async () => {
      probes[stub.name] = (probes[stub.name] ?? 0) + 1;
      return stub.missing;
    },
    refuses: stub.refuses === undefined ? undefined : () => stub.refuses,
    remoteWeights: stub.remote,
    location: stub.location === undefined ? undefined : () => stub.location,
    create: () => Promise.reject(new Error('not created in these tests')),
  }));
  kernel.configure(CONFIG, [
    { plugin: new EnginesPlugin(), key: '(built-in)', listedIn: 'drmas', request: 'drmas:engines', resolvedFrom: '@drmas/core' },
    {
      plugin: { name: 'stubs', register: (ctx) => factories.forEach((f) => ctx.provide(BackendFactory, f.name, f)) },
      key: 'plugins[0]',
      listedIn: 'test',
      request: 'stubs',
      resolvedFrom: 'inline',
    },
  ]);
  return { engines: kernel.get(Engines), probes };
}

const TRAINS: EngineCapability[] = ['sample', 'score', 'train'];
const request = (fields: Partial<EngineRequest> = {}): EngineRequest => ({
  needs: ['train'],
  settings: { runtime: 'cpu' },
  key: 'models.policy.backend',
  ...fields,
});

async function failure(promise: Promise<unknown>): Promise<DrmasError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!DrmasError.is(error)) throw new Error(`expected a DrmasError, got ${String(error)}`);
  return error;
}

describe('the ranking auto follows', () => {
  test('highest priority first, registration order among equals; engines without a priority are left out', () => {
    const { engines: service } = engines([
      { name: 'a', capabilities: TRAINS, priority: 10 },
      { name: 'teacher', capabilities: ['sample'] },
      { name: 'b', capabilities: TRAINS, priority: 30 },
      { name: 'c', capabilities: TRAINS, priority: 10 },
    ]);
    expect(service.ranked({ needs: ['sample'], settings: {} })).toEqual(['b', 'a', 'c']);
    expect(service.names()).toEqual(['a', 'teacher', 'b', 'c']);
  });

  test("a priority may depend on the model's settings (tfjs above onnx only on tfjs-node-gpu)", () => {
    const { engines: service } = engines([
      { name: 'onnx', capabilities: TRAINS, priority: 20 },
      { name: 'tfjs', capabilities: TRAINS, priority: { wasm: 10, 'tfjs-node-gpu': 30 } },
    ]);
    expect(service.ranked({ needs: ['train'], settings: { runtime: 'wasm' } })).toEqual(['onnx', 'tfjs']);
    expect(service.ranked({ needs: ['train'], settings: { runtime: 'tfjs-node-gpu' } })).toEqual(['tfjs', 'onnx']);
  });

  test('only engines with every capability asked for, which accept the settings', () => {
    const { engines: service } = engines([
      { name: 'sampler', capabilities: ['sample'], priority: 50 },
      { name: 'no-lora', capabilities: [...TRAINS, 'critic'], priority: 40 },
      { name: 'picky', capabilities: [...TRAINS, 'lora', 'critic'], priority: 30, refuses: 'too big' },
      { name: 'all', capabilities: [...TRAINS, 'lora', 'critic'], priority: 20 },
    ]);
    expect(service.ranked({ needs: ['sample'], settings: {} })).toEqual(['sampler', 'no-lora', 'all']);
    expect(service.ranked({ needs: ['train', 'critic'], settings: {} })).toEqual(['no-lora', 'all']);
    expect(service.ranked({ needs: ['train', 'lora'], settings: {} })).toEqual(['all']);
  });
});

describe('select with auto', () => {
  test('takes the first engine that fits and loads, listing those skipped above it; probes only engines that fit', async () => {
    const { engines: service, probes } = engines([
      { name: 'gpu', capabilities: TRAINS, priority: 40, missing: 'no CUDA device' },
      { name: 'sampler', capabilities: ['sample'], priority: 30 },
      { name: 'big', capabilities: TRAINS, priority: 25, refuses: 'its weights need 6 GiB, beyond the 4 GiB heap' },
      { name: 'cpu', capabilities: TRAINS, priority: 20 },
      { name: 'slow', capabilities: TRAINS, priority: 10 },
    ]);
    const choice = await service.select(request());
    expect(choice.name).toBe('cpu');
    expect(choice.skipped).toEqual([
      { name: 'gpu', reason: 'no CUDA device' },
      { name: 'sampler', reason: 'cannot train' },
      { name: 'big', reason: 'refuses this model: its weights need 6 GiB, beyond the 4 GiB heap' },
    ]);
    expect(probes).toEqual({ gpu: 1, cpu: 1 });
  });

  test('nothing fits: one error at the key listing every engine and why, the absent ones with what to install', async () => {
    const { engines: service } = engines(
      [
        { name: 'onnx', capabilities: [...TRAINS, 'lora'], priority: 20, missing: 'onnxruntime-node is not installed' },
        { name: 'vllm', capabilities: ['sample'] },
        { name: 'tinker', capabilities: [...TRAINS, 'lora'] },
        { name: 'slow', capabilities: TRAINS, priority: 10 },
      ],
      [
        {
          request: 'backend-tfjs',
          packageName: '@drmas/plugin-backend-tfjs',
          key: 'presets[0] > optionalPlugins[0]',
          listedIn: 'preset math',
          provides: { 'models.<id>.backend': ['tfjs'] },
        },
      ],
    );
    const error = await failure(service.select(request({ needs: ['train', 'lora'] })));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('models.policy.backend');
    expect(error.message).toBe(
      'no engine here can train and train LoRA adapters for this model:\n' +
        '  - onnx: onnxruntime-node is not installed\n' +
        '  - slow: cannot train LoRA adapters\n' +
        '  - vllm: cannot train or train LoRA adapters\n' +
        '  - tinker: chosen only by name (models.policy.backend: tinker)\n' +
        '  - tfjs: not installed (@drmas/plugin-backend-tfjs, which preset math loads where it is)',
    );
    expect(error.hint).toBe('npm i @drmas/plugin-backend-tfjs, or name one at models.policy.backend (tinker)');
  });

  test('a command-line flag at fault is an INVALID_ARGUMENT naming the flag', async () => {
    const { engines: service } = engines([{ name: 'sampler', capabilities: ['sample'], priority: 10 }]);
    const error = await failure(service.select(request({ needs: ['score'], key: '--engine' })));
    expect([error.code, error.key, error.message]).toEqual([
      'INVALID_ARGUMENT',
      '--engine',
      'no engine here can score token log-probs for this model:\n  - sampler: cannot score token log-probs',
    ]);
  });

  test('the engine a model already runs on: taken unprobed when the ranking reaches it, else the fallback; it alone when its weights are remote', async () => {
    const { engines: service, probes } = engines([
      { name: 'fast', capabilities: ['sample'], priority: 30, missing: 'libfast is missing' },
      { name: 'trainer', capabilities: TRAINS, priority: 20 },
      { name: 'slow', capabilities: TRAINS, priority: 10 },
      { name: 'unranked', capabilities: TRAINS },
      { name: 'remote', capabilities: TRAINS, remote: true },
    ]);
    const sample = (loadedOn: string) => service.select(request({ needs: ['sample'], key: 'models.policy.rollout', loadedOn }));
    expect(await sample('trainer')).toMatchObject({ name: 'trainer', skipped: [{ name: 'fast', reason: 'libfast is missing' }] });
    expect(await sample('unranked')).toMatchObject({ name: 'trainer' });
    expect(await sample('remote')).toMatchObject({ name: 'remote', skipped: [] });
    expect(probes).toEqual({ fast: 2, trainer: 1 });
    const { engines: onlyMissing } = engines([
      { name: 'fast', capabilities: ['sample'], priority: 30, missing: 'libfast is missing' },
      { name: 'unranked', capabilities: TRAINS },
    ]);
    expect(await onlyMissing.select(request({ needs: ['sample'], loadedOn: 'unranked' }))).toMatchObject({
      name: 'unranked',
      skipped: [{ name: 'fast', reason: 'libfast is missing' }],
    });
  });
});

describe('select with a named engine', () => {
  const stubs: Stub[] = [
    { name: 'onnx', capabilities: [...TRAINS, 'lora'], priority: 20 },
    { name: 'tfjs', capabilities: TRAINS, priority: 10, missing: 'no tfjs runtime loads' },
    { name: 'vllm', capabilities: ['sample'], refuses: 'models.<id>.rollout names no vllm server' },
  ];

  test('that serves is chosen after its probe, whatever its rank', async () => {
    const { engines: service, probes } = engines([...stubs, { name: 'teacher', capabilities: ['sample'] }]);
    expect(await service.select(request({ name: 'teacher', needs: ['sample'] }))).toMatchObject({ name: 'teacher', skipped: [] });
    expect(probes).toEqual({ teacher: 1 });
  });

  test('an unknown name says what is registered, with "Did you mean"', async () => {
    const { engines: service } = engines(stubs);
    const error = await failure(service.select(request({ name: 'onxx', key: '--engine' })));
    expect([error.code, error.key, error.message, error.hint]).toEqual([
      'UNKNOWN_NAME',
      '--engine',
      'no engine named "onxx" is registered (registered: onnx, tfjs, vllm)',
      'Did you mean "onnx"?',
    ]);
  });

  test('one lacking a capability, refusing the settings or failing to load says why, and what else fits', async () => {
    const { engines: service, probes } = engines(stubs);
    const lacking = await failure(service.select(request({ name: 'tfjs', needs: ['train', 'lora'] })));
    expect([lacking.code, lacking.key, lacking.message, lacking.hint]).toEqual([
      'CONFIG_INVALID',
      'models.policy.backend',
      'engine "tfjs" cannot train LoRA adapters',
      'name one that can (onnx), or give models.policy.backend: auto to take the best available',
    ]);
    const refusing = await failure(service.select(request({ name: 'vllm', needs: ['sample'], key: 'models.policy.rollout' })));
    expect(refusing.message).toBe('engine "vllm" refuses this model: models.<id>.rollout names no vllm server');
    const unavailable = await failure(service.select(request({ name: 'tfjs', key: '--engine' })));
    expect([unavailable.code, unavailable.message, unavailable.hint]).toEqual([
      'INVALID_ARGUMENT',
      'engine "tfjs" is unavailable here: no tfjs runtime loads',
      'install what is missing, or name one that can (onnx), or give --engine auto to take the best available',
    ]);
    // Lacking and refusing engines are not probed.
    expect(probes).toEqual({ tfjs: 1 });
  });
});

test('describe names the server a remote engine runs on', () => {
  const { engines: service } = engines([
    { name: 'onnx', capabilities: TRAINS, priority: 20 },
    { name: 'tinker', capabilities: TRAINS, location: 'http://127.0.0.1:8000' },
  ]);
  expect(service.describe('onnx', {})).toBe('onnx');
  expect(service.describe('tinker', {})).toBe('tinker at http://127.0.0.1:8000');
});
