import { performance } from 'node:perf_hooks';
import type { Metrics } from '../data/StepContext.js';
import type { HookName, KernelHooks } from './KernelHooks.js';

/**
 * Measures the wall time of every hook call through tapable interceptors and adds it to the metrics of the step
 * in progress as `timing/<hook>` (seconds; summed when a hook is called several times in a step, as `update` is
 * once per worker group).
 */
export class TimingInterceptor {
  private current: Metrics | undefined;

  install(hooks: KernelHooks): void {
    for (const name of Object.keys(hooks) as HookName[]) {
      const starts: number[] = [];
      const stop = () => {
        const start = starts.pop();
        if (start !== undefined && this.current) {
          const key = `timing/${name}`;
          this.current[key] = roundMicro((this.current[key] ?? 0) + (performance.now() - start) / 1000);
        }
      };
      (hooks[name] as { intercept(i: object): void }).intercept({
        call: () => {
          starts.push(performance.now());
        },
        result: stop,
        done: stop,
        error: stop,
      });
    }
  }

  /** Points the interceptor at the metrics of the step that starts now (undefined between steps). */
  attach(metrics: Metrics | undefined): void {
    this.current = metrics;
  }
}

function roundMicro(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}
