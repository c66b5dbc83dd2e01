import { describe, expect, test } from '@jest/globals';
import { allOf, chosenBy, createKernel, createToken, DrmasError, type ApplyContext, type Plugin } from '@drmas/core';

interface Clock {
  now(): number;
}
const Clock = createToken<Clock>('test:Clock', { label: 'clock' });
interface Sink {
  readonly id: string;
}
const Sink = createToken<Sink>('test:Sink', { label: 'sink' });

/** A plugin whose taps use what `apply` declared; `seen` records what they got. */
function consumer(seen: { clock?: number; sinks?: string[]; error?: unknown }, onApply?: (kernel: ApplyContext) => void): Plugin {
  return {
    name: 'consumer',
    apply(kernel) {
      const services = kernel.inject({ clock: Clock, sinks: allOf(Sink) });
      onApply?.(kernel);
      kernel.hooks.validate.tap('consumer', () => {
        try {
          seen.sinks = services.sinks.map((sink) => sink.id);
          seen.clock = services.clock.now();
        } catch (error) {
          seen.error = error;
        }
      });
    },
  };
}

describe('kernel.inject: the services a plugin declares in apply', () => {
  test('each is created by the container when a tap first reads it (not at apply), once, open roles as every binding', async () => {
    let created = 0;
    const provider: Plugin = {
      name: 'provider',
      register(ctx) {
        ctx.bind(Clock).toDynamicValue(() => {
          created++;
          return { now: () => 42 };
        });
        ctx.bind(Sink).toConstantValue({ id: 'a' });
        ctx.bind(Sink).toConstantValue({ id: 'b' });
      },
    };
    const seen: { clock?: number; sinks?: string[]; createdAtApply?: number } = {};
    await createKernel({
      cwd: '/',
      inline: {
        plugins: [
          provider,
          consumer(seen, () => {
            seen.createdAtApply = created;
          }),
        ],
      },
    });
    expect(seen.createdAtApply).toBe(0);
    expect(seen).toMatchObject({ clock: 42, sinks: ['a', 'b'] });
    expect(created).toBe(1);
  });

  test('a role nobody bound is MISSING_BINDING naming the plugin that declared it; an open role nobody bound is empty', async () => {
    const seen: { error?: unknown; sinks?: string[] } = {};
    await createKernel({ cwd: '/', inline: { plugins: [consumer(seen)] } });
    expect(seen.sinks).toEqual([]);
    expect(DrmasError.is(seen.error)).toBe(true);
    const error = seen.error as DrmasError;
    expect(error.code).toBe('MISSING_BINDING');
    expect(error.message).toBe('no clock is registered (needed by plugin consumer).');
  });

  test('chosenBy names the config key a missing role is chosen by', async () => {
    let caught: unknown;
    const plugin: Plugin = {
      name: 'keyed',
      apply(kernel) {
        const services = kernel.inject({ clock: chosenBy(Clock, 'clock.kind') });
        kernel.hooks.validate.tap('keyed', () => {
          try {
            services.clock.now();
          } catch (error) {
            caught = error;
          }
        });
      },
    };
    await createKernel({ cwd: '/', inline: { plugins: [plugin] } });
    expect((caught as DrmasError).key).toBe('clock.kind');
  });
});
