import { describe, expect, test } from '@jest/globals';
import { TempProject } from '../../test/support/tempProject.js';
import {
  AdvantageEstimator,
  agent,
  AgentRegistry,
  BackendFactory,
  createKernel,
  DrmasError,
  Environment,
  inject,
  injectable,
  Kernel,
  type Plugin,
} from '@drmas/core';

@agent('solver')
class SolverAgent {
  constructor(readonly options: Record<string, unknown>) {}
}

@agent('solver')
class OtherSolver {}

class Undecorated {}

const estimator = (name: string): AdvantageEstimator => ({ name, inputs: [], estimate: () => {} });

async function kernelWith(...plugins: Plugin[]): Promise<Kernel> {
  const { kernel } = await createKernel({ cwd: '/', inline: { plugins } });
  return kernel;
}

function caught(run: () => unknown): DrmasError {
  try {
    run();
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a DrmasError');
}

describe('agents', () => {
  test('@agent names a class; the registry creates it by name with options', () => {
    const registry = new AgentRegistry();
    registry.register(SolverAgent, 'plugin-a');
    const created = registry.create<SolverAgent>('solver', { temperature: 0.6 });
    expect(created).toBeInstanceOf(SolverAgent);
    expect(created.options).toEqual({ temperature: 0.6 });
    expect(registry.origin('solver')).toBe('plugin-a');
  });

  test('duplicate names are rejected naming both origins', () => {
    const registry = new AgentRegistry();
    registry.register(SolverAgent, 'plugin-a');
    const error = caught(() => registry.register(OtherSolver, 'plugin-b'));
    expect(error.code).toBe('DUPLICATE_NAME');
    expect(error.message).toBe('agent "solver" is registered twice: SolverAgent by plugin-a and OtherSolver by plugin-b');
  });

  test('a class without a name, and an unknown name with a suggestion', () => {
    const registry = new AgentRegistry();
    expect(caught(() => registry.register(Undecorated, 'p')).hint).toContain("decorate it with @agent('name')");
    registry.register('verifier', Undecorated, 'p');
    const error = caught(() => registry.resolve('verifer'));
    expect(error.code).toBe('UNKNOWN_NAME');
    expect(error.key).toBe('agents.verifer');
    expect(error.hint).toBe('Did you mean "verifier"?');
  });

  test('plugins register agents through their context, which records the plugin', async () => {
    const kernel = await kernelWith({ name: 'team-a', register: (ctx) => ctx.agents.register(SolverAgent), apply() {} });
    expect(kernel.agents.names()).toEqual(['solver']);
    expect(kernel.agents.origin('solver')).toBe('team-a');
    const twice = createKernel({
      cwd: '/',
      inline: {
        plugins: [
          { name: 'team-a', register: (ctx) => ctx.agents.register(SolverAgent), apply() {} },
          { name: 'team-b', register: (ctx) => ctx.agents.register('solver', OtherSolver), apply() {} },
        ],
      },
    });
    await expect(twice).rejects.toMatchObject({ code: 'DUPLICATE_NAME', key: 'agents.solver' });
  });
});

describe('DI errors reach the user as config-level messages', () => {
  test('an unknown named contribution lists what exists and suggests', async () => {
    const kernel = await kernelWith({
      name: 'algos',
      register: (ctx) => {
        ctx.provide(AdvantageEstimator, 'drmas', estimator('drmas'));
        ctx.provide(AdvantageEstimator, 'grpo', estimator('grpo'));
      },
      apply() {},
    });
    expect(kernel.getNamed(AdvantageEstimator, 'grpo').name).toBe('grpo');
    const error = caught(() => kernel.getNamed(AdvantageEstimator, 'drmass'));
    expect(error.code).toBe('UNKNOWN_NAME');
    expect(error.key).toBe('algorithm.advantage');
    expect(error.message).toContain('registered: drmas, grpo');
    expect(error.hint).toBe('Did you mean "drmas"?');
  });

  test('the same name from two plugins names both', async () => {
    const provide = (plugin: string): Plugin => ({
      name: plugin,
      register: (ctx) => ctx.provide(AdvantageEstimator, 'grpo', estimator('grpo')),
      apply() {},
    });
    await expect(kernelWith(provide('algos-a'), provide('algos-b'))).rejects.toMatchObject({
      code: 'DUPLICATE_NAME',
      message: expect.stringContaining('advantage estimator "grpo" is registered twice: by plugin "algos-a" and by plugin "algos-b"'),
    });
  });

  test('"No bindings found" names the role, who needed it and the config key', async () => {
    @injectable()
    class Trainer {
      constructor(@inject(BackendFactory) readonly backend: BackendFactory) {}
    }
    const kernel = await kernelWith({
      name: 'trainer-plugin',
      register: (ctx) => {
        ctx.bind(Trainer).toSelf();
      },
      apply() {},
    });
    const error = caught(() => kernel.get(Trainer));
    expect(error.code).toBe('MISSING_BINDING');
    expect(error.message).toBe('no engine is registered (needed by Trainer).');
    expect(error.key).toBe('models.<id>.backend');
    expect(error.hint).toContain('add the plugin that provides engine');
  });

  test('"Ambiguous bindings" names the plugins that bound the role', async () => {
    const bindBackend = (plugin: string): Plugin => ({
      name: plugin,
      register: (ctx) => {
        ctx.bind(BackendFactory).toConstantValue({
          name: plugin,
          capabilities: ['sample'],
          create: async () => {
            throw new Error('unused');
          },
        });
      },
      apply() {},
    });
    const kernel = await kernelWith(bindBackend('backend-x'), bindBackend('backend-y'));
    const error = caught(() => kernel.get(BackendFactory));
    expect(error.code).toBe('AMBIGUOUS_BINDING');
    expect(error.message).toBe('more than one engine is registered, by plugins "backend-x" and "backend-y"; the kernel cannot choose');
    expect(error.key).toBe('models.<id>.backend');
  });

  test('algorithm.advantage naming no estimator fails at validation', async () => {
    const { createKernel: create } = await import('@drmas/core');
    await expect(
      create({
        cwd: '/',
        inline: {
          algorithm: { advantage: 'gpro' },
          plugins: [
            {
              name: 'algos',
              register: (ctx) => ctx.provide(AdvantageEstimator, 'grpo', estimator('grpo')),
              apply() {},
            },
          ],
        },
      }),
    ).rejects.toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'algorithm.advantage',
      hint: 'Did you mean "grpo"?',
    });
  });

  test('a named role whose config key is not set: the key, and every registered name with its plugin', async () => {
    const environment = (name: string): Environment => ({
      name,
      maxRounds: 1,
      init: async () => {},
      batch: () => ({ tasks: [], nextCursor: 0 }),
      test: () => [],
      reset: () => {
        throw new Error('unused');
      },
      advance: async () => {},
    });
    const provide = (plugin: string, name: string): Plugin => ({
      name: plugin,
      register: (ctx) => ctx.provide(Environment, name, environment(name)),
      apply() {},
    });
    const kernel = await kernelWith(provide('env-a', 'alpha'), provide('env-b', 'beta'));
    const error = caught(() => kernel.getNamed(Environment, kernel.config.env.name, 'env.name'));
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'env.name', hint: 'set env.name to one of: alpha, beta' });
    expect(error.message).toBe('env.name is not set, so no environment is chosen (registered: alpha (plugin env-a), beta (plugin env-b))');
    const empty = await kernelWith();
    const none = caught(() => empty.getNamed(Environment, undefined));
    expect(none).toMatchObject({
      key: 'env.name',
      message: expect.stringContaining('(registered: none)'),
      hint: expect.stringContaining('set env.name'),
    });
  });

  test('a key the validate hook rejects names the config file it belongs in', async () => {
    const project = new TempProject('validate-file');
    try {
      project.write({
        'drmas.config.json': { plugins: ['./needs-env.mjs'], env: { seed: 3 } },
        'needs-env.mjs':
          "import { Environment } from '@drmas/core';\n" +
          "export default { name: 'needs-env', apply: (k) => k.hooks.validate.tap('needs-env', (c) => { k.getNamed(Environment, c.env.name, 'env.name'); }) };\n",
      });
      const { createKernel: create } = await import('@drmas/core');
      await expect(create({ cwd: project.dir })).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        key: 'env.name',
        file: project.path('drmas.config.json'),
      });
    } finally {
      project.dispose();
    }
  });
});
