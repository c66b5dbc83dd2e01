import { afterAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { createKernel, DrmasError, WorkerGroups, type Plugin, type PolicyBackend, type WorkerGroup } from '@drmas/core';
import { createOnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { Gateway } from '../src/index.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

/** The math preset's base checkpoint: a small Qwen2 with a tokenizer. */
const BASE = path.join(REPO_ROOT, 'presets/math/checkpoints/base/policy');
const OPTIONS = { host: '127.0.0.1', port: 0, windowMs: 2, maxBatch: 8 } as const;

const project = new TempProject('gateway-engines');
afterAll(() => project.dispose());

describe('the gateway through core roles, not the trainer', () => {
  test('serves the groups of any WorkerGroups role: loads them with createForSampling and releases them with dispose', async () => {
    const calls: string[] = [];
    const loaded: WorkerGroup[] = [];
    const groups: WorkerGroups = {
      ids: () => ['policy'],
      planned: () => [{ id: 'policy', model: 'policy', agents: ['solver'] }],
      createForSampling: async (run) => {
        calls.push(`createForSampling ${run.runDir}`);
        const engine: PolicyBackend = await createOnnxPolicyBackend({ model: BASE });
        loaded.push({ id: 'policy', agents: ['solver'], trainer: engine, rollout: engine, codec: engine.tokenizer });
      },
      all: () => loaded,
      get: (id) => loaded.find((group) => group.id === id)!,
      forAgent: () => loaded[0]!,
      dispose: () => {
        calls.push('dispose');
        for (const group of loaded) group.rollout.dispose();
      },
    };
    const ownGroups: Plugin = {
      name: 'own-groups',
      register: (ctx) => {
        ctx.bind(WorkerGroups).toConstantValue(groups);
      },
    };
    const { kernel } = await createKernel({ cwd: project.dir, inline: { plugins: [ownGroups], models: { policy: { model: BASE } } } });
    const gateway = await Gateway.open(kernel, { ...OPTIONS, log: () => undefined });
    try {
      expect(gateway.server.models.names()).toEqual(['policy', 'solver']);
      const response = await fetch(`${gateway.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'solver', prompt: 'Solve: 3+4', max_tokens: 4, seed: 1 }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { choices: unknown[] }).choices).toHaveLength(1);
    } finally {
      await gateway.close();
    }
    expect(calls).toEqual([`createForSampling ${project.dir}`, 'dispose']);
  });
});

describe('the engine of a model no agent uses, chosen by the engine service', () => {
  const config = (spare: Record<string, unknown>) => ({
    plugins: ['backend-onnx', 'backend-tfjs', 'trainer'],
    models: { policy: { model: BASE, backend: 'tfjs' }, spare: { model: BASE, ...spare } },
    agents: { solver: { model: 'policy' } },
  });

  test('rollout: auto samples on the best engine available (onnx); its backend names the engine otherwise', async () => {
    const log: string[] = [];
    for (const [spare, engine] of [
      [{ rollout: 'auto', backend: 'tfjs' }, 'onnx'],
      [{ backend: 'tfjs' }, 'tfjs'],
    ] as const) {
      const { kernel } = await createKernel({ cwd: project.dir, inline: config(spare) });
      const gateway = await Gateway.open(kernel, { ...OPTIONS, log: (m) => log.push(m) });
      try {
        expect(gateway.server.models.find('policy')!.engine.name).toBe('tfjs:policy');
        expect(gateway.server.models.find('spare')!.engine.name).toBe(`${engine}:spare`);
      } finally {
        await gateway.close();
      }
    }
    expect(log.filter((line) => line.startsWith('model spare (no agent uses it)'))).toEqual([
      expect.stringMatching(/^model spare \(no agent uses it\): samples on onnx:spare \(/),
      expect.stringMatching(/^model spare \(no agent uses it\): samples on tfjs:spare \(/),
    ]);
  });

  test('an engine that cannot sample it is refused at its key, before it loads', async () => {
    const { kernel } = await createKernel({ cwd: project.dir, inline: config({ rollout: 'onxx' }) });
    const error = await Gateway.open(kernel, { ...OPTIONS, log: () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(DrmasError.is(error) && [error.code, error.key, error.hint]).toEqual([
      'UNKNOWN_NAME',
      'models.spare.rollout',
      'Did you mean "onnx"?',
    ]);
  });
});
