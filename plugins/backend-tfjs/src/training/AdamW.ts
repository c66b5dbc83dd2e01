import * as tf from '@tensorflow/tfjs-core';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { assignParamGroups, DrmasError, type OptimizerSettings, type ParamGroupSettings } from '@drmas/core';
import { readSafetensors, serializeSafetensors } from '@drmas/models';

export const OPTIMIZER_STATE_FILE = 'optimizer.safetensors';
export const OPTIMIZER_META_FILE = 'optimizer.json';

/** Optimizer state of a checkpoint (optimizer.json, optimizer.safetensors) that is missing or does not fit the model. */
export class OptimizerStateError extends DrmasError {
  constructor(
    file: string,
    message: string,
    hint = 'resume from a checkpoint saved with its optimizer state ({ optimizer: true }) by this model',
  ) {
    super('CHECKPOINT_INVALID', message, { file, hint });
  }
}

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
  async serialize(settings: OptimizerSettings | undefined): Promise<Record<string, string | Uint8Array>> {
    const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
    for (const [name, m] of this.moments) {
      tensors.set(`${name}.exp_avg`, { shape: [...m.expAvg.shape], data: (await m.expAvg.data()) as Float32Array });
      tensors.set(`${name}.exp_avg_sq`, { shape: [...m.expAvgSq.shape], data: (await m.expAvgSq.data()) as Float32Array });
    }
    return {
      [OPTIMIZER_STATE_FILE]: serializeSafetensors(tensors, { dtype: 'F32' }),
      [OPTIMIZER_META_FILE]: JSON.stringify({ type: 'adamw', step: this.step, settings: settings ?? null }, null, 2) + '\n',
    };
  }

  /** Replaces the state with the one saved in `dir`; returns the settings saved with it. */
  async load(dir: string, weights: Map<string, tf.Variable>): Promise<OptimizerSettings | undefined> {
    const metaFile = join(dir, OPTIMIZER_META_FILE);
    let meta: { step?: unknown; settings?: OptimizerSettings };
    try {
      meta = JSON.parse(await readFile(metaFile, 'utf8')) as typeof meta;
    } catch (err) {
      throw new OptimizerStateError(metaFile, `cannot read optimizer state: ${(err as Error).message}`);
    }
    if (typeof meta.step !== 'number') throw new OptimizerStateError(metaFile, "missing numeric 'step'");
    const stateFile = join(dir, OPTIMIZER_STATE_FILE);
    const { tensors } = await readSafetensors(stateFile);
    this.disposeMoments();
    for (const [name, param] of weights) {
      const a = tensors.get(`${name}.exp_avg`);
      const b = tensors.get(`${name}.exp_avg_sq`);
      if (!a && !b) continue;
      if (!a || !b || a.data.length !== param.size || b.data.length !== param.size) {
        throw new OptimizerStateError(stateFile, `moments of '${name}' are missing or do not match shape [${param.shape.join(', ')}]`);
      }
      this.moments.set(
        name,
        tf.tidy(() => ({
          expAvg: tf.variable(tf.tensor(a.data, param.shape), false),
          expAvgSq: tf.variable(tf.tensor(b.data, param.shape), false),
        })),
      );
    }
    this.step = meta.step;
    return meta.settings;
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
