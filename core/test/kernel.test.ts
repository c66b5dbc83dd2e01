import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  AdvantagePlugin,
  DrmasError,
  HOOK_NAMES,
  Kernel,
  makeTurn,
  Rollouts,
  Stage,
  type LoadedPlugin,
  type Plugin,
  type RerunRequest,
  type RolloutBatch,
} from '@drmas/core';
import { kernelConfig } from './kernelConfig.js';

function loaded(plugin: Plugin): LoadedPlugin {
  return { plugin, key: `plugins[0]`, listedIn: 'test', request: plugin.name, resolvedFrom: 'inline' };
}

function turn(agentId: string, workerGroupId: string, trajectoryId: string, responseIds: number[]) {
  return makeTurn({
    groupId: 'g',
    trajectoryId,
    agentId,
    workerGroupId,
    round: 0,
    index: 0,
    promptIds: [1],
    responseIds,
    logProbs: responseIds.map(() => -1),
    valid: true,
  });
}

/** A plugin that records every hook it sees, producing a two-group batch. */
function recorder(calls: string[]): Plugin {
  const batch = (): RolloutBatch => ({
    metrics: {},
    trajectories: [
      {
        groupId: 'g',
        trajectoryId: 't0',
        taskId: 'x',
        done: true,
        turns: [turn('solver', 'wg-a', 't0', [5, 6]), turn('verifier', 'wg-b', 't0', [7])],
      },
      { groupId: 'g', trajectoryId: 't1', taskId: 'x', done: true, turns: [turn('solver', 'wg-a', 't1', [8])] },
    ],
  });
  return {
    name: 'recorder',
    apply(kernel) {
      const { hooks } = kernel;
      hooks.configure.tap('recorder', (c) => {
        calls.push('configure');
        return c;
      });
      hooks.validate.tap('recorder', () => {
        calls.push('validate');
      });
      hooks.setup.tapPromise('recorder', async () => {
        calls.push('setup');
      });
      hooks.beforeStep.tapPromise('recorder', async (s) => {
        calls.push(`beforeStep:${s.step}`);
      });
      hooks.rollout.tapPromise('recorder', async (s) => {
        calls.push(`rollout:${s.step}`);
        return batch();
      });
      hooks.afterRollout.tapPromise('recorder', async (b) => {
        calls.push('afterRollout');
        return b;
      });
      hooks.reward.tapPromise('recorder', async (b) => {
        calls.push('reward');
        return b;
      });
      hooks.advantage.tapPromise('recorder', async () => {
        calls.push('advantage');
      });
      hooks.update.tapPromise('recorder', async (g) => {
        calls.push(`update:${g.workerGroupId}:${g.rows.length}`);
      });
      hooks.afterStep.tapPromise('recorder', async (r) => {
        calls.push(`afterStep:${r.step}`);
      });
      hooks.evaluate.tapPromise('recorder', async (e) => {
        calls.push(`evaluate:${e.step}`);
      });
      hooks.shutdown.tapPromise('recorder', async () => {
        calls.push('shutdown');
      });
      hooks.failed.tap('recorder', (e) => {
        calls.push(`failed:${e.message}`);
      });
    },
  };
}

describe('Kernel', () => {
  test('hooks are frozen and are exactly the documented ones', () => {
    const kernel = new Kernel();
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
    expect([...HOOK_NAMES]).toEqual([
      'configure',
      'validate',
      'setup',
      'beforeStep',
      'rollout',
      'rerun',
      'afterRollout',
      'reward',
      'advantage',
      'updatePhase',
      'update',
      'afterStep',
      'evaluate',
      'failed',
      'shutdown',
    ]);
    expect(() => {
      (kernel.hooks as Record<string, unknown>).extra = 1;
    }).toThrow();
  });

  test('calls the hooks in order over several steps, update once per worker group', async () => {
    const calls: string[] = [];
    const kernel = new Kernel();
    kernel.configure(kernelConfig(3, { eval: { every: 2, atEnd: true, atStart: true } }), [loaded(recorder(calls))]);
    await kernel.run({ runDir: '/nonexistent' });
    const step = (n: number) => [
      `beforeStep:${n}`,
      `rollout:${n}`,
      'afterRollout',
      'reward',
      'advantage',
      'update:wg-a:2',
      'update:wg-b:1',
      `afterStep:${n}`,
    ];
    expect(calls).toEqual([
      'configure',
      'validate',
      'setup',
      'evaluate:0',
      ...step(1),
      ...step(2),
      'evaluate:2',
      ...step(3),
      'evaluate:3',
      'shutdown',
    ]);
  });

  test("one batch is packed per step; each worker group gets a view of only its agents' rows", async () => {
    const seen: Array<{ id: string; agents: readonly string[]; rows: number[]; ids: number[]; mask: number[]; logp: number[] }> = [];
    const batches = new Set<unknown>();
    const kernel = new Kernel();
    const capture: Plugin = {
      name: 'capture',
      apply(k) {
        k.hooks.advantage.tap('capture', (b) => {
          batches.add(b);
        });
        k.hooks.update.tap('capture', (g) => {
          batches.add(g.batch);
          const R = g.batch.responseLength;
          const column = (c: ArrayLike<number>) => [...g.rows].flatMap((r) => Array.from({ length: R }, (_, j) => c[r * R + j]!));
          seen.push({
            id: g.workerGroupId,
            agents: g.agentIds,
            rows: [...g.rows],
            ids: column(g.batch.responseIds),
            mask: column(g.batch.responseMask),
            logp: column(g.batch.rolloutLogProbs),
          });
        });
      },
    };
    kernel.configure(kernelConfig(1), [loaded(recorder([])), loaded(capture)]);
    await kernel.run({ runDir: '/nonexistent' });
    expect(batches.size).toBe(1);
    // Rows in trajectory order: t0 solver [5, 6], t0 verifier [7], t1 solver [8]; responses padded to 2 tokens.
    expect(seen).toEqual([
      { id: 'wg-a', agents: ['solver'], rows: [0, 2], ids: [5, 6, 8, 0], mask: [1, 1, 1, 0], logp: [-1, -1, -1, 0] },
      { id: 'wg-b', agents: ['verifier'], rows: [1], ids: [7, 0], mask: [1, 0], logp: [-1, 0] },
    ]);
  });

  test('a run whose updates would see only zero advantages fails before setup, naming algorithm.advantage', async () => {
    const calls: string[] = [];
    const trainerOnly: Plugin = {
      name: 'trainer-only',
      apply(k) {
        k.hooks.setup.tap('trainer-only', () => {
          calls.push('setup');
        });
        k.hooks.update.tap('trainer-only', () => {});
      },
    };
    const kernel = new Kernel();
    kernel.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(trainerOnly)]);
    await expect(kernel.run({ runDir: '/nonexistent', log: () => {} })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'algorithm.advantage',
      message: expect.stringContaining('nothing computes advantages'),
    });
    expect(calls).toEqual([]);
    // A plugin of its own on the advantage hook is enough.
    const own = new Kernel();
    own.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(trainerOnly), loaded(recorder([]))]);
    await expect(own.run({ runDir: '/nonexistent', log: () => {} })).resolves.toMatchObject({ runDir: '/nonexistent' });
  });

  test("tapsOf lists a hook's taps in the order it calls them: by stage, a `before` tap ahead of those it names, then as added", async () => {
    const called: string[] = [];
    const kernel = new Kernel();
    const tap = (options: { name: string; stage?: number; before?: string }) =>
      kernel.hooks.setup.tap(options, () => {
        called.push(options.name);
      });
    tap({ name: 'a' });
    tap({ name: 'b', stage: Stage.REPORT });
    tap({ name: 'c', stage: Stage.FIRST });
    tap({ name: 'd', before: 'a' });
    tap({ name: 'e' });
    kernel.hooks.setup.tapPromise({ name: 'f', stage: Stage.FIRST, before: 'c' }, async () => {
      called.push('f');
    });
    // Worked by hand from tapable's rules: d goes ahead of a (after c, of a lower stage), e after a (b's stage is
    // higher), f ahead of c (and so of everything).
    const expected = ['f', 'c', 'd', 'a', 'e', 'b'];
    expect(kernel.tapsOf('setup').map((t) => t.name)).toEqual(expected);
    expect(kernel.tapsOf('setup')[0]).toEqual({ name: 'f', type: 'promise', stage: Stage.FIRST });
    await kernel.hooks.setup.promise({} as never);
    expect(called).toEqual(expected);
    expect(kernel.tapsOf('rollout')).toEqual([]);
    expect(kernel.hasTaps('setup') && !kernel.hasTaps('rollout')).toBe(true);
  });

  test('stages order taps regardless of registration order', async () => {
    const order: string[] = [];
    const kernel = new Kernel();
    const plugin: Plugin = {
      name: 'staged',
      apply(k) {
        k.hooks.setup.tap({ name: 'report', stage: Stage.REPORT }, () => {
          order.push('report');
        });
        k.hooks.setup.tap({ name: 'default' }, () => {
          order.push('default');
        });
        k.hooks.setup.tap({ name: 'environment', stage: Stage.ENVIRONMENT }, () => {
          order.push('environment');
        });
        k.hooks.setup.tap({ name: 'backend', stage: Stage.BACKEND }, () => {
          order.push('backend');
        });
        k.hooks.setup.tap({ name: 'model', stage: Stage.MODEL }, () => {
          order.push('model');
        });
        k.hooks.setup.tap({ name: 'first', stage: Stage.FIRST }, () => {
          order.push('first');
        });
      },
    };
    kernel.configure(kernelConfig(0), [loaded(plugin)]);
    await kernel.run({ runDir: '/nonexistent' });
    expect(order).toEqual(['first', 'backend', 'model', 'environment', 'default', 'report']);
    expect(
      Stage.FIRST < Stage.BACKEND &&
        Stage.BACKEND < Stage.MODEL &&
        Stage.MODEL < Stage.ENVIRONMENT &&
        Stage.ENVIRONMENT < Stage.DEFAULT &&
        Stage.DEFAULT < Stage.OBSERVE &&
        Stage.OBSERVE < Stage.REPORT,
    ).toBe(true);
  });

  test("every step's metrics carry wall time per hook, measured by the interceptor", async () => {
    const lines: Array<Record<string, number>> = [];
    const kernel = new Kernel();
    const slowReward: Plugin = {
      name: 'slow-reward',
      apply(k) {
        k.hooks.reward.tapPromise('slow-reward', async (b) => {
          await new Promise((r) => setTimeout(r, 30));
          return b;
        });
        k.hooks.afterStep.tap('sink', (r) => {
          lines.push(r.metrics);
        });
      },
    };
    kernel.configure(kernelConfig(2), [loaded(recorder([])), loaded(slowReward)]);
    await kernel.run({ runDir: '/nonexistent' });
    expect(lines).toHaveLength(2);
    for (const metrics of lines) {
      for (const hook of ['beforeStep', 'rollout', 'afterRollout', 'reward', 'advantage', 'update']) {
        expect(typeof metrics[`timing/${hook}`]).toBe('number');
      }
      expect(metrics['timing/reward']).toBeGreaterThanOrEqual(0.025);
      expect(metrics['timing/reward']).toBeLessThan(5);
      expect(metrics['timing/advantage']).toBeLessThan(metrics['timing/reward']!);
    }
  });

  test("every step's metrics carry the process's memory in GiB, its peak within what Linux reports before and after", async () => {
    // VmHWM: the kernel's own record of the process's peak resident memory, in kB.
    const peakGiB = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024 ** 2;
    const lines: Array<Record<string, number>> = [];
    const kernel = new Kernel();
    const sink: Plugin = { name: 'sink', apply: (k) => void k.hooks.afterStep.tap('sink', (r) => void lines.push(r.metrics)) };
    kernel.configure(kernelConfig(2), [loaded(recorder([])), loaded(sink)]);
    const before = peakGiB();
    await kernel.run({ runDir: '/nonexistent' });
    const after = peakGiB();
    expect(lines).toHaveLength(2);
    for (const metrics of lines) {
      const rss = metrics['perf/cpu_memory_used_gb']!;
      const peak = metrics['perf/max_cpu_memory_used_gb']!;
      const heap = metrics['perf/heap_used_gb']!;
      // getrusage's peak and VmHWM are sampled apart by a few pages: 2 MiB of slack (a unit slip is 1024x).
      expect(peak).toBeGreaterThanOrEqual(before - 2e-3);
      expect(peak).toBeLessThanOrEqual(after + 2e-3);
      expect(rss).toBeLessThanOrEqual(peak + 1e-4);
      expect(heap).toBeGreaterThan(0);
      expect(heap).toBeLessThan(rss);
    }
  });

  test('a run without a rollout producer is a clear error before anything is set up', async () => {
    const calls: string[] = [];
    const kernel = new Kernel();
    const watcher: Plugin = {
      name: 'watcher',
      apply(k) {
        k.hooks.failed.tap('watcher', (e) => {
          calls.push(`failed:${(e as DrmasError).code}`);
        });
        k.hooks.shutdown.tapPromise('watcher', async () => {
          calls.push('shutdown');
        });
      },
    };
    kernel.configure(kernelConfig(1), [loaded(watcher)]);
    await expect(kernel.run({ runDir: '/nonexistent' })).rejects.toMatchObject({ code: 'NO_ROLLOUT', key: 'presets' });
    expect(calls).toEqual([]);
  });

  test('a rollout tap that returns nothing stops the step, and failed + shutdown still run', async () => {
    const calls: string[] = [];
    const kernel = new Kernel();
    const empty: Plugin = {
      name: 'empty',
      apply(k) {
        // A tap that declines to produce, as a bail hook's tap may.
        k.hooks.rollout.tapPromise('empty', async () => undefined as unknown as RolloutBatch);
        k.hooks.failed.tap('empty', (e) => {
          calls.push(`failed:${(e as DrmasError).code}`);
        });
        k.hooks.shutdown.tapPromise('empty', async () => {
          calls.push('shutdown');
        });
      },
    };
    kernel.configure(kernelConfig(1), [loaded(empty)]);
    await expect(kernel.run({ runDir: '/nonexistent', log: () => {} })).rejects.toMatchObject({
      code: 'NO_ROLLOUT',
      message: "no plugin produced a rollout batch at step 1: the rollout hook's taps (empty) returned nothing",
    });
    expect(calls).toEqual(['failed:NO_ROLLOUT', 'shutdown']);
  });

  test('an aborted run stops before the next step', async () => {
    const calls: string[] = [];
    const controller = new AbortController();
    const kernel = new Kernel();
    const stopper: Plugin = {
      name: 'stopper',
      apply(k) {
        k.hooks.afterStep.tap('stopper', () => controller.abort('test'));
      },
    };
    kernel.configure(kernelConfig(5), [loaded(recorder(calls)), loaded(stopper)]);
    await kernel.run({ runDir: '/nonexistent', signal: controller.signal });
    expect(calls.filter((c) => c.startsWith('rollout'))).toEqual(['rollout:1']);
  });
});

describe('Rollouts: every rollout of a step goes through the kernel', () => {
  test("a plugin asking for another round gets the producer's next batch at the same step; the kernel counts both", async () => {
    const calls: string[] = [];
    const again: Plugin = {
      name: 'again',
      apply(k) {
        k.hooks.afterRollout.tapPromise({ name: 'again', stage: Stage.FIRST }, async (first, step) => {
          const second = await k.get(Rollouts).next(step);
          return { trajectories: [...first.trajectories, ...second.trajectories], metrics: first.metrics };
        });
      },
    };
    const kernel = new Kernel();
    kernel.configure(kernelConfig(1), [loaded(recorder(calls)), loaded(again)]);
    await kernel.run({ runDir: '/nonexistent' });
    // Two rounds of the recorder's batch (t0 solver + verifier, t1 solver): wg-a gets 4 rows, wg-b 2.
    expect(calls.filter((c) => /^(rollout|update)/.test(c))).toEqual(['rollout:1', 'rollout:1', 'update:wg-a:4', 'update:wg-b:2']);
  });

  test('a rollout tap asking for a rollout while producing one is refused rather than recursing', async () => {
    const greedy: Plugin = {
      name: 'greedy',
      apply(k) {
        k.hooks.rollout.tapPromise('greedy', (step) => k.get(Rollouts).next(step));
      },
    };
    const kernel = new Kernel();
    kernel.configure(kernelConfig(1), [loaded(greedy)]);
    await expect(kernel.run({ runDir: '/nonexistent', log: () => {} })).rejects.toMatchObject({
      code: 'PLUGIN_INVALID',
      message: expect.stringContaining('asked for a rollout of step 1 while producing one'),
    });
  });

  test("rerun hands the request to the rerun hook's first tap returning a batch, and says so when none does", async () => {
    const requests: RerunRequest[] = [];
    const results: RolloutBatch[] = [];
    const request: RerunRequest = { taskIds: ['x'], samplesPerTask: 1, seed: 0, label: 'greedy', sampling: { temperature: 0 } };
    const asker: Plugin = {
      name: 'asker',
      apply(k) {
        k.hooks.advantage.tapPromise('asker', async (_batch, step) => {
          results.push(await k.get(Rollouts).rerun(request, step));
        });
      },
    };
    const rerunner: Plugin = {
      name: 'rerunner',
      apply(k) {
        k.hooks.rerun.tapPromise('rerunner', async (r) => {
          requests.push(r);
          return { trajectories: [], metrics: { reran: r.taskIds.length } };
        });
      },
    };
    const kernel = new Kernel();
    kernel.configure(kernelConfig(1), [loaded(recorder([])), loaded(asker), loaded(rerunner)]);
    expect(kernel.get(Rollouts).reruns()).toBe(true);
    await kernel.run({ runDir: '/nonexistent' });
    expect(requests).toEqual([request]);
    expect(results).toEqual([{ trajectories: [], metrics: { reran: 1 } }]);

    const alone = new Kernel();
    alone.configure(kernelConfig(1), [loaded(recorder([])), loaded(asker)]);
    expect(alone.get(Rollouts).reruns()).toBe(false);
    await expect(alone.run({ runDir: '/nonexistent', log: () => {} })).rejects.toMatchObject({
      code: 'NO_ROLLOUT',
      message: expect.stringContaining(
        'nothing ran the greedy episodes of step 1: no plugin re-runs the episodes of a step (the rerun hook has no tap)',
      ),
    });
  });
});

describe('updatePhase: one plugin may own the order of the whole update phase', () => {
  const phase = (owns: boolean, calls: string[]): Plugin => ({
    name: 'phase',
    apply(k) {
      k.hooks.updatePhase.tapPromise('phase', async (batch) => {
        calls.push(
          `updatePhase:${batch
            .workerGroups()
            .map((g) => g.workerGroupId)
            .join(',')}`,
        );
        return owns ? true : undefined;
      });
    },
  });

  test('a tap returning true has updated every group: update is not called', async () => {
    const calls: string[] = [];
    const kernel = new Kernel();
    kernel.configure(kernelConfig(2), [loaded(recorder(calls)), loaded(phase(true, calls))]);
    await kernel.run({ runDir: '/nonexistent' });
    expect(calls.filter((c) => c.startsWith('update'))).toEqual(['updatePhase:wg-a,wg-b', 'updatePhase:wg-a,wg-b']);
  });

  test('a tap returning nothing leaves the phase to update, once per worker group', async () => {
    const calls: string[] = [];
    const kernel = new Kernel();
    kernel.configure(kernelConfig(1), [loaded(recorder(calls)), loaded(phase(false, calls))]);
    await kernel.run({ runDir: '/nonexistent' });
    expect(calls.filter((c) => c.startsWith('update'))).toEqual(['updatePhase:wg-a,wg-b', 'update:wg-a:2', 'update:wg-b:1']);
  });
});

describe("apply gets the kernel's hooks, config and lookups, not the kernel", () => {
  test('a plugin reading a member of the whole kernel in apply fails naming the plugin, the member and what to use', () => {
    const old: Plugin = {
      name: 'old-style',
      apply(k) {
        (k as unknown as Kernel).container.isBound('x');
      },
    };
    const kernel = new Kernel();
    let error: unknown;
    try {
      kernel.configure(kernelConfig(1), [loaded(old)]);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'PLUGIN_INVALID', key: 'plugins[0]', file: 'test' });
    expect((error as Error).message).toContain('plugin "old-style" (plugins[0]): apply() reads kernel.container');
    expect((error as DrmasError).hint).toContain('bind in register(ctx)');
  });

  test('what apply uses of the kernel works: hooks, config, lookups', async () => {
    const seen: unknown[] = [];
    const reader: Plugin = {
      name: 'reader',
      apply(k) {
        seen.push(
          k.config.trainer.steps,
          typeof k.get(Rollouts).next,
          k.tapsOf('rollout').map((t) => t.name),
          Object.isFrozen(k),
        );
      },
    };
    const kernel = new Kernel();
    kernel.configure(kernelConfig(2), [loaded(recorder([])), loaded(reader)]);
    expect(seen).toEqual([2, 'function', ['recorder'], true]);
  });

  test('agents registered in register(ctx) are created in apply, as third-party plugins do; registering in apply is refused', () => {
    class Planner {
      constructor(readonly options: Record<string, unknown>) {}
    }
    const made: unknown[] = [];
    const planner: Plugin = {
      name: 'planner',
      register(ctx) {
        ctx.agents.register('planner', Planner);
      },
      apply(k) {
        made.push(k.agents.create<Planner>('planner', { depth: 2 }), k.agents.has('planner'));
      },
    };
    new Kernel().configure(kernelConfig(1), [loaded(planner)]);
    expect(made[0]).toBeInstanceOf(Planner);
    expect((made[0] as Planner).options).toEqual({ depth: 2 });
    expect(made[1]).toBe(true);

    const late: Plugin = {
      name: 'late',
      apply(k) {
        (k.agents as unknown as { register(name: string, c: unknown): void }).register('planner', Planner);
      },
    };
    expect(() => new Kernel().configure(kernelConfig(1), [loaded(late)])).toThrow(
      expect.objectContaining({ code: 'PLUGIN_INVALID', hint: 'register agent classes in register(ctx) with ctx.agents.register' }),
    );
  });
});
