import { DrmasError, SeededRng } from '@drmas/core';
import type { MixedValue, MixerSample, ValueMixer } from './valueMixer.js';

/** The shape of a QMIX mixer: agents n, state embedding size S, mixing embedding size E (pymarl's `mixing_embed_dim`). */
export interface QmixShape {
  agents: number;
  stateDim: number;
  embedDim: number;
}

/** The mixer's own Adam (its parameters are few and train on the CPU beside whichever engine trains the critics). */
export interface MixerOptimizerSettings {
  lr: number;
  betas: [number, number];
  eps: number;
  /** Gradients of larger global norm are scaled down to it; 0 turns clipping off (pymarl's grad_norm_clip: 10). */
  maxGradNorm: number;
}

/** What a checkpoint keeps of a QMIX mixer: its shape, parameters and Adam moments, as plain JSON (doubles round-trip exactly). */
export interface QmixState extends QmixShape {
  kind: 'qmix';
  parameters: number[];
  adam: { step: number; m: number[]; v: number[] };
}

/** Offsets of the blocks of the flat parameter vector; each linear layer is W [in][out] row-major, then b [out]. */
interface Layout {
  hyperW1: number;
  hyperB1: number;
  hyperWFinal: number;
  stateValue1: number;
  stateValue2: number;
  size: number;
}

function layoutOf({ agents: n, stateDim: S, embedDim: E }: QmixShape): Layout {
  const hyperW1 = 0;
  const hyperB1 = hyperW1 + S * n * E + n * E;
  const hyperWFinal = hyperB1 + S * E + E;
  const stateValue1 = hyperWFinal + S * E + E;
  const stateValue2 = stateValue1 + S * E + E;
  return { hyperW1, hyperB1, hyperWFinal, stateValue1, stateValue2, size: stateValue2 + E + 1 };
}

/** y[o] = b[o] + sum_i x[i] W[i][o] for the layer at `offset` of `p`. */
function linear(p: Float64Array, offset: number, x: ArrayLike<number>, inputs: number, outputs: number): Float64Array {
  const y = new Float64Array(outputs);
  const bias = offset + inputs * outputs;
  for (let o = 0; o < outputs; o++) y[o] = p[bias + o]!;
  for (let i = 0; i < inputs; i++) {
    const xi = x[i]!;
    if (xi === 0) continue;
    const row = offset + i * outputs;
    for (let o = 0; o < outputs; o++) y[o] = y[o]! + xi * p[row + o]!;
  }
  return y;
}

/** Adds the layer's parameter gradients for output gradient `dy` into `g`. */
function linearBackward(g: Float64Array, offset: number, x: ArrayLike<number>, dy: Float64Array, inputs: number): void {
  const outputs = dy.length;
  const bias = offset + inputs * outputs;
  for (let o = 0; o < outputs; o++) g[bias + o] = g[bias + o]! + dy[o]!;
  for (let i = 0; i < inputs; i++) {
    const xi = x[i]!;
    if (xi === 0) continue;
    const row = offset + i * outputs;
    for (let o = 0; o < outputs; o++) g[row + o] = g[row + o]! + xi * dy[o]!;
  }
}

const elu = (z: number) => (z > 0 ? z : Math.expm1(z));
const eluSlope = (z: number) => (z > 0 ? 1 : Math.exp(z));

/** Everything the backward pass reads from one forward pass. */
interface Forward {
  total: number;
  preW1: Float64Array;
  preWFinal: Float64Array;
  hidden: Float64Array;
  preHidden: Float64Array;
  preStateValue: Float64Array;
}

/**
 * QMIX's monotonic mixing network (Rashid et al. 2018; pymarl's `QMixer` with one hypernet layer):
 *
 *   w1 = |Hw1 s + c1| (n x E), b1 = Hb1 s + c2, wf = |Hwf s + c3| (E), v(s) = u2 . relu(U1 s + c4) + c5
 *   Q_tot = wf . elu(V w1 + b1) + v(s)
 *
 * Non-negative w1 and wf and ELU's positive slope make dQ_tot/dV_k >= 0 for every state, so an agent's value can only
 * raise the team's. Plain Float64 with hand-written gradients rather than tfjs: the network is a few thousand
 * parameters evaluated once per joint step on the CPU whichever engine trains the critics (tfjs, onnx, tinker), its
 * gradients are checked against central finite differences to 1e-7, and its state is plain JSON in the checkpoint.
 */
export class QmixMixer implements ValueMixer {
  readonly kind = 'qmix';
  readonly agents: number;
  readonly stateDim: number;
  readonly embedDim: number;
  /** The flat parameter vector (read and written in place by tests and `step`). */
  readonly parameters: Float64Array;
  private readonly layout: Layout;
  private adam: { step: number; m: Float64Array; v: Float64Array };

  /** Initialized as PyTorch's `nn.Linear`: weights and biases uniform in +-1/sqrt(fan_in), from `seed`. */
  constructor(shape: QmixShape, seed: number) {
    for (const [key, value] of Object.entries(shape)) {
      if (!Number.isInteger(value) || value < 1)
        throw new DrmasError('INVALID_ARGUMENT', `a QMIX mixer's ${key} must be an integer >= 1`, { key });
    }
    this.agents = shape.agents;
    this.stateDim = shape.stateDim;
    this.embedDim = shape.embedDim;
    this.layout = layoutOf(shape);
    this.parameters = new Float64Array(this.layout.size);
    const rng = new SeededRng(seed).fork('qmix-mixer');
    const { agents: n, stateDim: S, embedDim: E } = shape;
    const l = this.layout;
    const init = (offset: number, inputs: number, outputs: number) => {
      const bound = 1 / Math.sqrt(inputs);
      for (let i = 0; i < (inputs + 1) * outputs; i++) this.parameters[offset + i] = (2 * rng.next() - 1) * bound;
    };
    init(l.hyperW1, S, n * E);
    init(l.hyperB1, S, E);
    init(l.hyperWFinal, S, E);
    init(l.stateValue1, S, E);
    init(l.stateValue2, E, 1);
    this.adam = { step: 0, m: new Float64Array(l.size), v: new Float64Array(l.size) };
  }

  private check(values: ArrayLike<number>, state: ArrayLike<number>): void {
    if (values.length !== this.agents) {
      throw new DrmasError('INVALID_ARGUMENT', `the QMIX mixer mixes ${this.agents} agents' values; got ${values.length}`, {
        key: 'values',
      });
    }
    if (state.length !== this.stateDim) {
      throw new DrmasError('INVALID_ARGUMENT', `the QMIX mixer's state embedding has ${this.stateDim} entries; got ${state.length}`, {
        key: 'state',
      });
    }
  }

  private forward(values: ArrayLike<number>, state: ArrayLike<number>): Forward {
    this.check(values, state);
    const { agents: n, stateDim: S, embedDim: E, parameters: p, layout: l } = this;
    const preW1 = linear(p, l.hyperW1, state, S, n * E);
    const b1 = linear(p, l.hyperB1, state, S, E);
    const preWFinal = linear(p, l.hyperWFinal, state, S, E);
    const preStateValue = linear(p, l.stateValue1, state, S, E);
    const preHidden = new Float64Array(E);
    const hidden = new Float64Array(E);
    let total = p[l.stateValue2 + E]!;
    for (let j = 0; j < E; j++) {
      let z = b1[j]!;
      for (let k = 0; k < n; k++) z += values[k]! * Math.abs(preW1[k * E + j]!);
      preHidden[j] = z;
      hidden[j] = elu(z);
      total += hidden[j]! * Math.abs(preWFinal[j]!) + Math.max(0, preStateValue[j]!) * p[l.stateValue2 + j]!;
    }
    return { total, preW1, preWFinal, hidden, preHidden, preStateValue };
  }

  mix(values: ArrayLike<number>, state: ArrayLike<number>): MixedValue {
    const f = this.forward(values, state);
    return { total: f.total, weights: this.weightsAt(f) };
  }

  /** dQ_tot/dV_k = sum_j |w1_kj| |wf_j| elu'(z_j): non-negative by construction. */
  private weightsAt(f: Forward): Float64Array {
    const { agents: n, embedDim: E } = this;
    const weights = new Float64Array(n);
    for (let j = 0; j < E; j++) {
      const dz = Math.abs(f.preWFinal[j]!) * eluSlope(f.preHidden[j]!);
      for (let k = 0; k < n; k++) weights[k] = weights[k]! + Math.abs(f.preW1[k * E + j]!) * dz;
    }
    return weights;
  }

  /** Adds `scale` x dQ_tot/dtheta at (values, state) into `g`. */
  private backward(g: Float64Array, values: ArrayLike<number>, state: ArrayLike<number>, f: Forward, scale: number): void {
    const { agents: n, stateDim: S, embedDim: E, parameters: p, layout: l } = this;
    const dPreW1 = new Float64Array(n * E);
    const dB1 = new Float64Array(E);
    const dPreWFinal = new Float64Array(E);
    const dPreStateValue = new Float64Array(E);
    for (let j = 0; j < E; j++) {
      dPreWFinal[j] = scale * f.hidden[j]! * Math.sign(f.preWFinal[j]!);
      const dz = scale * Math.abs(f.preWFinal[j]!) * eluSlope(f.preHidden[j]!);
      dB1[j] = dz;
      for (let k = 0; k < n; k++) dPreW1[k * E + j] = dz * values[k]! * Math.sign(f.preW1[k * E + j]!);
      const relu = Math.max(0, f.preStateValue[j]!);
      g[l.stateValue2 + j] = g[l.stateValue2 + j]! + scale * relu;
      dPreStateValue[j] = f.preStateValue[j]! > 0 ? scale * p[l.stateValue2 + j]! : 0;
    }
    g[l.stateValue2 + E] = g[l.stateValue2 + E]! + scale;
    linearBackward(g, l.hyperW1, state, dPreW1, S);
    linearBackward(g, l.hyperB1, state, dB1, S);
    linearBackward(g, l.hyperWFinal, state, dPreWFinal, S);
    linearBackward(g, l.stateValue1, state, dPreStateValue, S);
  }

  /**
   * The TD loss L = 0.5 mean_i (Q_tot(V_i; s_i) - y_i)^2 over `samples`, its gradient in the parameters and in each
   * sample's agent values (dL/dV_ik = (Q_tot - y_i) w_ik / count, what a critic would receive end to end).
   */
  loss(samples: readonly MixerSample[]): { loss: number; gradient: Float64Array; valueGradients: Float64Array[] } {
    const gradient = new Float64Array(this.parameters.length);
    let loss = 0;
    const valueGradients: Float64Array[] = [];
    for (const sample of samples) {
      const f = this.forward(sample.values, sample.state);
      const error = f.total - sample.target;
      loss += (0.5 * error * error) / samples.length;
      this.backward(gradient, sample.values, sample.state, f, error / samples.length);
      valueGradients.push(this.weightsAt(f).map((w) => (w * error) / samples.length));
    }
    return { loss, gradient, valueGradients };
  }

  /** One Adam step on the TD loss over `samples`; the loss and the gradient norm before clipping. */
  step(samples: readonly MixerSample[], optimizer: MixerOptimizerSettings): { loss: number; gradNorm: number } {
    if (samples.length === 0) return { loss: 0, gradNorm: 0 };
    const { loss, gradient } = this.loss(samples);
    const gradNorm = Math.hypot(...gradient);
    const clip = optimizer.maxGradNorm > 0 && gradNorm > optimizer.maxGradNorm ? optimizer.maxGradNorm / gradNorm : 1;
    const [beta1, beta2] = optimizer.betas;
    const adam = this.adam;
    adam.step++;
    const correction1 = 1 - beta1 ** adam.step;
    const correction2 = 1 - beta2 ** adam.step;
    for (let i = 0; i < gradient.length; i++) {
      const g = gradient[i]! * clip;
      adam.m[i] = beta1 * adam.m[i]! + (1 - beta1) * g;
      adam.v[i] = beta2 * adam.v[i]! + (1 - beta2) * g * g;
      this.parameters[i] =
        this.parameters[i]! - (optimizer.lr * (adam.m[i]! / correction1)) / (Math.sqrt(adam.v[i]! / correction2) + optimizer.eps);
    }
    return { loss, gradNorm };
  }

  getState(): QmixState {
    return {
      kind: 'qmix',
      agents: this.agents,
      stateDim: this.stateDim,
      embedDim: this.embedDim,
      parameters: Array.from(this.parameters),
      adam: { step: this.adam.step, m: Array.from(this.adam.m), v: Array.from(this.adam.v) },
    };
  }

  /** Restores a `getState` of a mixer of the same shape (else CHECKPOINT_INVALID). */
  setState(state: QmixState): void {
    const size = this.parameters.length;
    const sameShape =
      state?.kind === 'qmix' &&
      state.agents === this.agents &&
      state.stateDim === this.stateDim &&
      state.embedDim === this.embedDim &&
      state.parameters?.length === size &&
      state.adam?.m?.length === size &&
      state.adam?.v?.length === size;
    if (!sameShape) {
      throw new DrmasError(
        'CHECKPOINT_INVALID',
        `the saved QMIX mixer does not fit this run's (${this.agents} agents, state ${this.stateDim}, embedding ${this.embedDim})`,
        { key: 'critic.mixer', hint: 'resume with the config that wrote the checkpoint (config.json in its run directory)' },
      );
    }
    this.parameters.set(state.parameters);
    this.adam = { step: state.adam.step, m: Float64Array.from(state.adam.m), v: Float64Array.from(state.adam.v) };
  }
}
