import * as tf from '@tensorflow/tfjs-core';
import { assignParamGroups, type OptimizerSettings, type ParamGroupSettings } from '@drmas/core';
import { readAdamWState, serializeAdamWState, type AdamWMoments, type CheckpointFileContents } from '@drmas/models';

/** AdamW's state copied out of its tensors. */
export interface AdamWSnapshot {
  readonly step: number;
  readonly moments: ReadonlyMap<string, { expAvg: Float32Array; expAvgSq: Float32Array; shape: number[] }>;
}

interface Moments {
  expAvg: tf.Variable;
  expAvgSq: tf.Variable;
}

/**
 * AdamW as torch.optim.AdamW computes it (decoupled weight decay `p *= 1 - lr*wd`, bias-corrected moments,
 * `eps` added after the bias-corrected square root), over tf.Variables. A parameter in one of `settings.paramGroups`
 * takes that group's learning rate (scaled by the schedule as the model's is), weight decay, betas and eps.
 */
export class AdamW {
  /** Optimizer steps taken (torch's `state['step']`). */
  step = 0;
  private readonly moments = new Map<string, Moments>();
  /** Each parameter's group, per `paramGroups` list (the same list arrives with every update of a run). */
  private readonly groupIndex = new WeakMap<readonly ParamGroupSettings[], Map<string, number>>();

  /**
   * Applies one update with `grads` (already clipped); `lrScale` is the schedule's factor on `settings.lr` and on
   * every param group's lr.
   */
  apply(weights: Map<string, tf.Variable>, grads: Map<string, tf.Tensor>, settings: OptimizerSettings, lrScale: number): void {
    const [beta1, beta2] = settings.betas;
    const { eps, weightDecay } = settings;
    const lr = settings.lr * lrScale;
    this.step += 1;
    const groups = settings.paramGroups;
    const groupOf = groups.length ? this.groupsOf(weights, groups) : undefined;
    for (const [name, param] of weights) {
      const grad = grads.get(name);
      if (!grad) continue;
      const group = groups[groupOf?.get(name) ?? -1];
      const paramLr = group?.lr === undefined ? lr : group.lr * lrScale;
      const paramDecay = group?.weightDecay ?? weightDecay;
      const [b1, b2] = group?.betas ?? [beta1, beta2];
      const paramEps = group?.eps ?? eps;
      const bias1 = 1 - Math.pow(b1, this.step);
      const bias2Sqrt = Math.sqrt(1 - Math.pow(b2, this.step));
      const m = this.momentsOf(name, param);
      tf.tidy(() => {
        const expAvg = tf.add(tf.mul(m.expAvg, b1), tf.mul(grad, 1 - b1));
        const expAvgSq = tf.add(tf.mul(m.expAvgSq, b2), tf.mul(tf.square(grad), 1 - b2));
        m.expAvg.assign(expAvg);
        m.expAvgSq.assign(expAvgSq);
        const denom = tf.add(tf.div(tf.sqrt(expAvgSq), bias2Sqrt), paramEps);
        const decayed = paramDecay === 0 ? param : tf.mul(param, 1 - paramLr * paramDecay);
        param.assign(tf.sub(decayed, tf.mul(tf.div(expAvg, denom), paramLr / bias1)));
      });
    }
  }

  private groupsOf(weights: Map<string, tf.Variable>, groups: readonly ParamGroupSettings[]): Map<string, number> {
    let index = this.groupIndex.get(groups);
    if (!index) {
      index = assignParamGroups([...weights.keys()], groups);
      this.groupIndex.set(groups, index);
    }
    return index;
  }

  private momentsOf(name: string, param: tf.Variable): Moments {
    let m = this.moments.get(name);
    if (!m) {
      m = tf.tidy(() => ({ expAvg: tf.variable(tf.zerosLike(param), false), expAvgSq: tf.variable(tf.zerosLike(param), false) }));
      this.moments.set(name, m);
    }
    return m;
  }

  /** A copy of the moments and the step count, for `restore`. */
  async snapshot(): Promise<AdamWSnapshot> {
    const moments = new Map<string, { expAvg: Float32Array; expAvgSq: Float32Array; shape: number[] }>();
    for (const [name, m] of this.moments) {
      moments.set(name, {
        expAvg: Float32Array.from(await m.expAvg.data()),
        expAvgSq: Float32Array.from(await m.expAvgSq.data()),
        shape: [...m.expAvg.shape],
      });
    }
    return { step: this.step, moments };
  }

  /** Replaces the state with a `snapshot`'s (moments made after it are dropped). */
  restore(snapshot: AdamWSnapshot): void {
    this.disposeMoments();
    for (const [name, m] of snapshot.moments) {
      this.moments.set(
        name,
        tf.tidy(() => ({
          expAvg: tf.variable(tf.tensor(m.expAvg, m.shape), false),
          expAvgSq: tf.variable(tf.tensor(m.expAvgSq, m.shape), false),
        })),
      );
    }
    this.step = snapshot.step;
  }

  /** The contents of `optimizer.safetensors` and `optimizer.json` (written with the checkpoint, atomically). */
  async serialize(settings: OptimizerSettings | undefined): Promise<Record<string, CheckpointFileContents>> {
    const moments: [string, AdamWMoments][] = [];
    for (const [name, m] of this.moments)
      moments.push([name, { expAvg: (await m.expAvg.data()) as Float32Array, expAvgSq: (await m.expAvgSq.data()) as Float32Array }]);
    return serializeAdamWState(this.step, moments, (name) => this.moments.get(name)!.expAvg.shape, settings);
  }

  /** Replaces the state with the one saved in `dir` (by either backend); returns the settings saved with it. */
  async load(dir: string, weights: Map<string, tf.Variable>): Promise<OptimizerSettings | undefined> {
    const state = await readAdamWState(
      dir,
      [...weights].map(([name, param]) => [name, param.shape]),
    );
    this.restore({
      step: state.step,
      moments: new Map([...state.moments].map(([name, m]) => [name, { ...m, shape: [...weights.get(name)!.shape] }])),
    });
    return state.settings;
  }

  private disposeMoments(): void {
    for (const m of this.moments.values()) {
      m.expAvg.dispose();
      m.expAvgSq.dispose();
    }
    this.moments.clear();
  }

  dispose(): void {
    this.disposeMoments();
    this.step = 0;
  }
}
