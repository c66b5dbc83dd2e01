import { assignParamGroups, type MomentPrecision, type OptimizerSettings, type ParamGroupSettings, type WeightTensor } from '@drmas/core';
import {
  isBlockwise,
  momentsIn,
  readAdamWState,
  serializeAdamWState,
  zeroMoments,
  type BlockwiseAdamWMoments,
  type CheckpointFileContents,
  type HeldAdamWMoments,
} from '@drmas/models';
import { AdamWKernel, type AdamWScalars } from './AdamWKernel.js';

/** AdamW's moments and step count, copied (`snapshot`) or to put back (`restore`). */
export interface HostAdamWState {
  readonly step: number;
  readonly moments: ReadonlyMap<string, HeldAdamWMoments>;
}

const f32 = Math.fround;

/**
 * AdamW over host Float32Array buffers, as the tfjs backend's `AdamW` (and torch.optim.AdamW) computes it: decoupled
 * weight decay `p *= 1 - lr*wd`, bias-corrected moments, `eps` added after the bias-corrected square root, param
 * groups with their own lr (scaled by the schedule), weight decay, betas and eps. Each operation is rounded to
 * float32 in the order tfjs applies its element-wise kernels, so both backends take the same step up to the
 * rounding of the gradients they are given. The element-wise update runs in `AdamWKernel` (WebAssembly SIMD, the
 * same float32 operations) over buffers the trainer owns: onnxruntime-node has no optimizer, and a graph for it
 * would copy every weight in and out per step. With `moments: '8bit'` each tensor of 4,096 values or more keeps its
 * moments as bitsandbytes' `AdamW8bit` does (`blockwise8bit.ts`): the same kernel steps each block of 256 from its
 * codes and writes its new codes and absmax.
 */
export class HostAdamW {
  /** Optimizer steps taken (torch's `state['step']`). */
  step = 0;
  private readonly moments = new Map<string, HeldAdamWMoments>();
  private readonly groupIndex = new WeakMap<readonly ParamGroupSettings[], Map<string, number>>();
  private compiled?: AdamWKernel;

  private get kernel(): AdamWKernel {
    return (this.compiled ??= new AdamWKernel());
  }

  /** Updates `weights` in place with `grads` (already clipped); `lrScale` is the schedule's factor on every lr. */
  apply(weights: Map<string, WeightTensor>, grads: Map<string, Float32Array>, settings: OptimizerSettings, lrScale: number): void {
    this.step += 1;
    const groups = settings.paramGroups;
    let groupOf: Map<string, number> | undefined;
    if (groups.length) {
      groupOf = this.groupIndex.get(groups);
      if (!groupOf) this.groupIndex.set(groups, (groupOf = assignParamGroups([...weights.keys()], groups)));
    }
    for (const [name, param] of weights) {
      const grad = grads.get(name);
      if (!grad) continue;
      const group = groups[groupOf?.get(name) ?? -1];
      const lr = group?.lr === undefined ? settings.lr * lrScale : group.lr * lrScale;
      const decay = group?.weightDecay ?? settings.weightDecay;
      const [b1, b2] = group?.betas ?? settings.betas;
      const eps = f32(group?.eps ?? settings.eps);
      const m = this.momentsOf(name, param.data.length, settings.moments ?? 'float32');
      // The scalars as tfjs makes them: float32 constants.
      const scalars: AdamWScalars = {
        keep1: f32(b1),
        take1: f32(1 - b1),
        keep2: f32(b2),
        take2: f32(1 - b2),
        bias2Sqrt: f32(Math.sqrt(1 - Math.pow(b2, this.step))),
        eps,
        shrink: f32(1 - lr * decay),
        stepSize: f32(lr / (1 - Math.pow(b1, this.step))),
      };
      if (isBlockwise(m)) this.kernel.stepBlockwise(param.data, grad, m.expAvg, m.expAvgSq, scalars);
      else this.kernel.step(param.data, grad, m.expAvg, m.expAvgSq, scalars);
    }
  }

  /** A copy of the moments and the step count. */
  snapshot(): HostAdamWState {
    const moments = new Map<string, HeldAdamWMoments>();
    for (const [name, m] of this.moments) moments.set(name, copyMoments(m));
    return { step: this.step, moments };
  }

  /** Replaces the state with a copy of `state` (moments made after it are dropped). */
  restore(state: HostAdamWState): void {
    this.moments.clear();
    for (const [name, m] of state.moments) this.moments.set(name, copyMoments(m));
    this.step = state.step;
  }

  /** Forgets every moment and the step count (a fresh optimizer). */
  reset(): void {
    this.moments.clear();
    this.step = 0;
  }

  /** The contents of `optimizer.safetensors` and `optimizer.json` (the format every backend reads). */
  serialize(weights: Map<string, WeightTensor>, settings: OptimizerSettings | undefined): Record<string, CheckpointFileContents> {
    return serializeAdamWState(this.step, this.moments, (name) => weights.get(name)?.shape ?? [sizeOf(this.moments.get(name)!)], settings);
  }

  /**
   * Replaces the state with the one saved in `dir` (by either backend) for `weights`, its moments held in the
   * precision the file has them in until an update asks for another.
   */
  async load(dir: string, weights: Map<string, WeightTensor>): Promise<void> {
    const { step, moments } = await readAdamWState(
      dir,
      [...weights].map(([name, w]) => [name, w.shape]),
      'stored',
    );
    this.moments.clear();
    for (const [name, m] of moments) this.moments.set(name, m);
    this.step = step;
  }

  /** The moments of `name`, held as `precision` asks (zero for a parameter not stepped before, else converted). */
  private momentsOf(name: string, size: number, precision: MomentPrecision): HeldAdamWMoments {
    const held = this.moments.get(name) ?? zeroMoments(size, precision);
    const m = momentsIn(held, precision);
    if (m !== this.moments.get(name)) this.moments.set(name, m);
    return m;
  }
}

function copyMoments(m: HeldAdamWMoments): HeldAdamWMoments {
  if (!isBlockwise(m)) return { expAvg: m.expAvg.slice(), expAvgSq: m.expAvgSq.slice() };
  const copy = ({ codes, absmax }: BlockwiseAdamWMoments['expAvg']) => ({ codes: codes.slice(), absmax: absmax.slice() });
  return { expAvg: copy(m.expAvg), expAvgSq: copy(m.expAvgSq) };
}

function sizeOf(m: HeldAdamWMoments): number {
  return isBlockwise(m) ? m.expAvg.codes.length : m.expAvg.length;
}
