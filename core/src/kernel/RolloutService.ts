import type { StepContext } from '../data/StepContext.js';
import { makeTurn, type RolloutBatch, type TurnFields } from '../data/Turn.js';
import { DrmasError } from '../errors/DrmasError.js';
import type { RerunRequest, Rollouts } from '../services/Rollouts.js';
import type { HookName, KernelHooks } from './KernelHooks.js';
import type { TapRecord } from './TapLedger.js';

/** The kernel's `Rollouts`: every rollout of a step, the step's own included, goes through here. */
export class RolloutService implements Rollouts {
  /** The step whose rollout the `rollout` hook is producing now. */
  private producing: number | undefined;
  /** Whether the warning about turns built as before 0.2.0 was given (once per kernel). */
  private warnedStepTurns = false;

  constructor(
    private readonly hooks: KernelHooks,
    private readonly tapsOf: (hook: HookName) => TapRecord[],
    private readonly configFile: () => string | undefined,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Every turn of a rollout made a Turn (`makeTurn`), so that `step` reads its round whoever built it (a literal, a
   * structuredClone, JSON); turns a plugin built as before 0.2.0, with `step` and no `round`, get their `step` as
   * `round`, with one warning naming the hook's taps; a turn with neither is refused.
   */
  private withRounds(batch: RolloutBatch, hook: 'rollout' | 'rerun', step: number): RolloutBatch {
    for (const trajectory of batch.trajectories) {
      for (const turn of trajectory.turns) {
        if (typeof turn.round === 'number') {
          if (Object.getOwnPropertyDescriptor(turn, 'step') === undefined) makeTurn(turn);
          continue;
        }
        const taps = this.tapsOf(hook).map((t) => t.name);
        const old: unknown = Object.getOwnPropertyDescriptor(turn, 'step')?.value;
        if (typeof old !== 'number') {
          throw new DrmasError(
            'PLUGIN_INVALID',
            `turn ${turn.index} (agent ${turn.agentId}) of trajectory ${trajectory.trajectoryId}, from the ${hook} hook's taps (${taps.join(', ')}) at step ${step}, has no round`,
            { hint: "make each turn with core's makeTurn({ ..., round }) (round: the episode's round the turn was taken in, from 0)" },
          );
        }
        if (!this.warnedStepTurns) {
          this.warnedStepTurns = true;
          this.warn(
            `the ${hook} hook's taps (${taps.join(', ')}) build turns with \`step\`, their name before 0.2.0, read as \`round\`; make turns with makeTurn({ ..., round }) from @drmas/core`,
          );
        }
        const fields: TurnFields & { step?: number } = turn;
        delete fields.step;
        fields.round = old;
        makeTurn(fields);
      }
    }
    return batch;
  }

  async next(step: StepContext): Promise<RolloutBatch> {
    if (this.producing !== undefined) {
      throw new DrmasError(
        'PLUGIN_INVALID',
        `a rollout tap asked for a rollout of step ${step.step} while producing one (Rollouts.next inside the rollout hook would never end)`,
        { hint: 'a rollout tap returns its batch; a plugin that needs more episodes asks Rollouts.next from afterRollout or later' },
      );
    }
    this.producing = step.step;
    let batch: RolloutBatch | undefined;
    try {
      batch = await this.hooks.rollout.promise(step);
    } finally {
      this.producing = undefined;
    }
    if (batch) return this.withRounds(batch, 'rollout', step.step);
    const taps = this.tapsOf('rollout').map((t) => t.name);
    throw new DrmasError(
      'NO_ROLLOUT',
      `no plugin produced a rollout batch at step ${step.step}: ${taps.length ? `the rollout hook's taps (${taps.join(', ')}) returned nothing` : 'the rollout hook has no tap'}`,
      {
        key: 'presets',
        file: this.configFile(),
        hint: 'add a preset with an orchestra (e.g. "math") or a plugin whose rollout tap returns a batch',
      },
    );
  }

  async rerun(request: RerunRequest, step: StepContext): Promise<RolloutBatch> {
    const batch = await this.hooks.rerun.promise(request, step);
    if (batch) return this.withRounds(batch, 'rerun', step.step);
    const taps = this.tapsOf('rerun').map((t) => t.name);
    throw new DrmasError(
      'NO_ROLLOUT',
      `nothing ran the ${request.label} episodes of step ${step.step}: ${taps.length ? `the rerun hook's taps (${taps.join(', ')}) returned nothing` : 'no plugin re-runs the episodes of a step (the rerun hook has no tap)'}`,
      {
        key: 'presets',
        file: this.configFile(),
        hint: 'list a plugin that runs episodes of given tasks (the orchestra does), or choose an estimator that needs no further episodes',
      },
    );
  }

  reruns(): boolean {
    return this.tapsOf('rerun').length > 0;
  }
}
