import { describe, expect, test } from '@jest/globals';
import { DrmasError, Kernel, type LoadedPlugin, type Plugin, type ResolvedConfig, type RolloutBatch } from '@drmas/core';
import { kernelConfig } from './kernelConfig.js';

/** Nothing is evaluated: these kernels have no `evaluate` taps to run. */
function config(steps: number): ResolvedConfig {
  return kernelConfig(steps, { eval: { every: 0, atEnd: false, atStart: false } });
}

function loaded(plugin: Plugin, key = 'plugins[0]'): LoadedPlugin {
  return { plugin, key, listedIn: '/project/drmas.config.json', request: plugin.name, resolvedFrom: `/project/${plugin.name}.js` };
}

const EMPTY: RolloutBatch = { trajectories: [], metrics: {} };

/** A plugin whose rollout produces an empty batch, so a run reaches its later hooks. */
const producer: Plugin = {
  name: 'producer',
  apply(kernel) {
    kernel.hooks.rollout.tapPromise('producer', async () => EMPTY);
  },
};

async function runError(plugins: Plugin[], steps = 2): Promise<DrmasError> {
  const kernel = new Kernel({ configFile: '/project/drmas.config.json' });
  kernel.configure(
    config(steps),
    plugins.map((p, i) => loaded(p, `plugins[${i}]`)),
  );
  const error = await kernel.run({ runDir: '/nonexistent', log: () => {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!DrmasError.is(error)) throw new Error(`expected a DrmasError, got ${String(error)}`);
  return error;
}

describe('an error thrown in a tap names the plugin, the hook and the step', () => {
  test('a TypeError in a sync tap at step 2 becomes PLUGIN_FAILED with the original as cause', async () => {
    const original = new TypeError('x is not a function');
    const thrower: Plugin = {
      name: 'thrower',
      apply(kernel) {
        kernel.hooks.afterStep.tap('thrower', ({ step }) => {
          if (step === 2) throw original;
        });
      },
    };
    const error = await runError([producer, thrower]);
    expect(error).toMatchObject({
      code: 'PLUGIN_FAILED',
      message: 'plugin thrower failed in hook afterStep at step 2: TypeError: x is not a function',
      key: 'plugins[1]',
      file: '/project/drmas.config.json',
    });
    expect(error.cause).toBe(original);
    expect(error.hint).toContain('/project/thrower.js');
  });

  test('a full disk is OUTPUT_UNWRITABLE naming trainer.outputDir, not a bug in the plugin', async () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    const writer: Plugin = {
      name: 'writer',
      apply(kernel) {
        kernel.hooks.shutdown.tapPromise('writer', async () => {
          throw full;
        });
      },
    };
    const error = await runError([producer, writer]);
    expect(error).toMatchObject({
      code: 'OUTPUT_UNWRITABLE',
      message: 'plugin writer failed in hook shutdown: the disk is full (ENOSPC: no space left on device, write)',
      key: 'trainer.outputDir',
    });
    expect(error.cause).toBe(full);
    expect(error.hint).toContain('free space');
    expect(error.hint).not.toContain('a bug');
  });

  test('a rejected promise tap and a callback tap are attributed alike', async () => {
    const rejecting: Plugin = {
      name: 'rejecting',
      apply(kernel) {
        kernel.hooks.reward.tapPromise('rejecting', async () => {
          throw new Error('no reward model');
        });
      },
    };
    expect((await runError([producer, rejecting])).message).toBe('plugin rejecting failed in hook reward at step 1: no reward model');
    const calling: Plugin = {
      name: 'calling',
      apply(kernel) {
        kernel.hooks.beforeStep.tapAsync('calling', (_step, callback) => callback(new RangeError('bad schedule')));
      },
    };
    expect((await runError([producer, calling])).message).toBe(
      'plugin calling failed in hook beforeStep at step 1: RangeError: bad schedule',
    );
  });

  test('outside the step loop there is no step; a thrown string is a message', async () => {
    const setupThrower: Plugin = {
      name: 'setup-thrower',
      apply(kernel) {
        kernel.hooks.setup.tap('setup-thrower', () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- plugins may throw anything; this one throws a string
          throw 'no GPU';
        });
      },
    };
    expect((await runError([producer, setupThrower])).message).toBe('plugin setup-thrower failed in hook setup: no GPU');
  });

  test('a DrmasError keeps its code, key and hint, its message gaining the plugin and hook', async () => {
    const original = new DrmasError('OUT_OF_MEMORY', 'the batch does not fit', {
      key: 'agents.solver.train.microBatchSize',
      hint: 'lower it',
    });
    const trainer: Plugin = {
      name: 'trainer',
      apply(kernel) {
        kernel.hooks.afterRollout.tapPromise('trainer', async () => {
          throw original;
        });
      },
    };
    const error = await runError([producer, trainer]);
    expect(error).toMatchObject({
      code: 'OUT_OF_MEMORY',
      message: 'the batch does not fit [plugin trainer, hook afterRollout, step 1]',
      key: 'agents.solver.train.microBatchSize',
      hint: 'lower it',
      // The kernel has no resolution to ask, so its config file stands for where the key is set.
      file: '/project/drmas.config.json',
    });
    expect(error.cause).toBe(original);
  });

  test('a config check at validate that names its key keeps its message bare; one without a key gains the plugin', () => {
    const validating = (details: { key?: string }): Plugin => ({
      name: 'checker',
      apply(kernel) {
        kernel.hooks.validate.tap('checker', () => {
          throw new DrmasError('CONFIG_INVALID', 'checker.level must be set', details);
        });
      },
    });
    const configureError = (plugin: Plugin): DrmasError => {
      const kernel = new Kernel({ configFile: '/project/drmas.config.json' });
      try {
        kernel.configure(config(1), [loaded(plugin)]);
      } catch (error) {
        if (DrmasError.is(error)) return error;
        throw error;
      }
      throw new Error('expected validate to fail');
    };
    expect(configureError(validating({ key: 'trainer.steps' })).message).toBe('checker.level must be set');
    expect(configureError(validating({})).message).toBe('checker.level must be set [plugin checker, hook validate]');
  });

  test('a hook called inside another tap is attributed once, to the tap that threw', async () => {
    const inner: Plugin = {
      name: 'inner',
      apply(kernel) {
        kernel.hooks.rollout.tapPromise('inner', async () => {
          throw new Error('sampler crashed');
        });
      },
    };
    const outer: Plugin = {
      name: 'outer',
      apply(kernel) {
        kernel.hooks.afterRollout.tapPromise('outer', async (batch, step) => (await kernel.hooks.rollout.promise(step)) ?? batch);
      },
    };
    const once: Plugin = {
      name: 'once',
      apply(kernel) {
        let first = true;
        // A bail hook's tap declines with undefined, letting the next tap produce.
        kernel.hooks.rollout.tapPromise({ name: 'once', stage: -1 }, async () => {
          if (!first) return undefined as unknown as RolloutBatch;
          first = false;
          return EMPTY;
        });
      },
    };
    expect((await runError([once, inner, outer])).message).toBe('plugin inner failed in hook rollout at step 1: sampler crashed');
  });

  test('what taps return is unchanged: a bail hook still takes the first batch', async () => {
    const kernel = new Kernel();
    const seen: number[] = [];
    kernel.configure(config(1), [
      loaded(producer),
      loaded({
        name: 'watch',
        apply(k) {
          k.hooks.afterStep.tap('watch', (result) => {
            seen.push(result.rollout === EMPTY ? 1 : 0);
          });
        },
      }),
    ]);
    await kernel.run({ runDir: '/nonexistent', log: () => {} });
    expect(seen).toEqual([1]);
  });
});
