import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DrmasError, type Metrics, type TrainingBatch } from '@drmas/core';
import {
  agentCredits,
  QmixMixer,
  tdLambdaTargets,
  VdnMixer,
  type MixerSample,
  type QmixState,
  type ValueMixer,
} from '@drmas/plugin-algorithms';
import type { MixerSettings } from '../config/criticConfig.js';
import type { CriticLearner } from '../critic/CriticLearner.js';
import { TokenStateEmbedding } from './tokenStateEmbedding.js';

/** Where a checkpoint keeps QMIX's mixing network, beside the critics' folders. */
export const MIXER_FILE = 'mixer.json';

/** One joint step of a trajectory: the turns its agents took at one round. */
interface JointStep {
  rows: number[];
}

/**
 * VDN's or QMIX's team value over IPPO's per-role critics, and the credit it gives each turn. At a joint step (a
 * trajectory's rows at one round) the agents' values V_k (each role's critic before its turn's first
 * token; 0 for a role with no turn there) mix into Q_tot(V; s), s the state embedding of the step's first prompt. The
 * team's reward at a joint step is the mean of its turns' rewards (a shared reward each turn carries once); TD(lambda)
 * over the trajectory's joint steps gives the target y. A turn of agent k is credited
 * A_k = w_k (y - Q_tot) / sum_j w_j^2 (w_k = dQ_tot/dV_k, over the roles present: `agentCredits`), and its token
 * rewards are replaced by y_k = V_k + A_k on its last token, so that GAE over the turn (gamma = lam = 1) starts at
 * exactly A_k and its critic regresses on y_k: the team loss's gradient, normalized by |w|^2.
 */
export class TeamMixer {
  private readonly mixer: ValueMixer;
  private readonly embedding: TokenStateEmbedding | undefined;
  private samples: MixerSample[] = [];

  constructor(
    readonly kind: 'vdn' | 'qmix',
    /** The roles whose critics mix, in the order of the mixer's inputs. */
    readonly roles: readonly string[],
    private readonly settings: MixerSettings,
    seed: number,
  ) {
    if (kind === 'vdn') {
      this.mixer = new VdnMixer(roles.length);
      return;
    }
    this.embedding = new TokenStateEmbedding(settings.stateDim, seed);
    this.mixer = new QmixMixer({ agents: roles.length, stateDim: settings.stateDim, embedDim: settings.embedDim }, seed);
  }

  /** Parameters of the mixing network (VDN has none). */
  get parameterCount(): number {
    return this.mixer instanceof QmixMixer ? this.mixer.parameters.length : 0;
  }

  /** Each trajectory's joint steps over the mixed roles' rows, in order (rows are packed in trajectory order). */
  private jointSteps(batch: TrainingBatch): JointStep[][] {
    const roles = new Set(this.roles);
    const { agent, trajectory, round } = batch.ids;
    const rounds = round.names.length;
    const byTrajectory = new Map<number, Map<number, JointStep>>();
    for (let row = 0; row < batch.rows; row++) {
      if (!roles.has(agent.names[agent.codes[row]!]!) || batch.responseLengths[row] === 0) continue;
      const t = trajectory.codes[row]!;
      let joint = byTrajectory.get(t);
      if (!joint) byTrajectory.set(t, (joint = new Map<number, JointStep>()));
      const key = t * rounds + round.codes[row]!;
      let at = joint.get(key);
      if (!at) joint.set(key, (at = { rows: [] }));
      at.rows.push(row);
    }
    return [...byTrajectory.values()].map((joint) => [...joint.values()]);
  }

  /** Credits the mixed roles' rows of `batch` (their token rewards become y_k, see the class); metrics under `critic/mixer/`. */
  credit(batch: TrainingBatch, metrics: Metrics): void {
    const values = batch.values;
    if (!values) return;
    const R = batch.responseLength;
    const roleIndex = new Map(this.roles.map((role, k) => [role, k]));
    const { agent } = batch.ids;
    const roleOf = (row: number) => roleIndex.get(agent.names[agent.codes[row]!]!)!;
    const weightSums = new Float64Array(this.roles.length);
    const weightCounts = new Float64Array(this.roles.length);
    let totalSum = 0;
    let errorSum = 0;
    let squaredErrorSum = 0;
    let count = 0;
    this.samples = [];
    for (const trajectory of this.jointSteps(batch)) {
      const points = trajectory.map(({ rows }) => {
        const v = new Float64Array(this.roles.length);
        const present = new Set<number>();
        for (const row of rows) {
          const k = roleOf(row);
          if (present.has(k)) continue;
          present.add(k);
          v[k] = values[row * R]!;
        }
        const state = this.embedding ? this.embedding.embed(batch.promptIds[rows[0]!]!) : new Float64Array(0);
        const reward = rows.reduce((s, row) => s + batch.rewards[row]!, 0) / rows.length;
        return { rows, v, state, reward, present, mixed: this.mixer.mix(v, state) };
      });
      const targets = tdLambdaTargets(
        points.map((p) => p.reward),
        points.map((p) => p.mixed.total),
        this.settings.gamma,
        this.settings.lambda,
      );
      points.forEach((point, i) => {
        const target = targets[i]!;
        const present = this.roles.map((_, k) => point.present.has(k));
        const credit = agentCredits(this.mixer, point.v, point.state, target, present);
        for (const row of point.rows) {
          const k = roleOf(row);
          const length = batch.responseLengths[row]!;
          batch.tokenRewards.fill(0, row * R, row * R + length);
          batch.tokenRewards[row * R + length - 1] = values[row * R]! + credit.advantages[k]!;
        }
        for (const k of point.present) {
          weightSums[k] = weightSums[k]! + point.mixed.weights[k]!;
          weightCounts[k] = weightCounts[k]! + 1;
        }
        const error = target - credit.total;
        totalSum += credit.total;
        errorSum += error;
        squaredErrorSum += error * error;
        count++;
        this.samples.push({ values: point.v, state: point.state, target });
      });
    }
    if (count === 0) return;
    metrics['critic/mixer/joint_steps'] = count;
    metrics['critic/mixer/q_tot_mean'] = totalSum / count;
    metrics['critic/mixer/td_error_mean'] = errorSum / count;
    metrics['critic/mixer/td_loss'] = (0.5 * squaredErrorSum) / count;
    this.roles.forEach((role, k) => {
      if (weightCounts[k]! > 0) metrics[`critic/mixer/weight/${role}`] = weightSums[k]! / weightCounts[k]!;
    });
  }

  /** QMIX's mixing network takes `mixer.updates` Adam steps on the joint steps of the last `credit`. */
  train(metrics: Metrics): void {
    const samples = this.samples;
    this.samples = [];
    if (!(this.mixer instanceof QmixMixer) || samples.length === 0) return;
    let loss = 0;
    let gradNorm = 0;
    for (let i = 0; i < this.settings.updates; i++) ({ loss, gradNorm } = this.mixer.step(samples, this.settings.optimizer));
    metrics['critic/mixer/loss'] = loss;
    metrics['critic/mixer/grad_norm'] = gradNorm;
  }

  /** Writes QMIX's network and Adam moments to `<criticsDir>/mixer.json` (VDN has nothing to keep). */
  save(criticsDir: string): void {
    if (!(this.mixer instanceof QmixMixer)) return;
    mkdirSync(criticsDir, { recursive: true });
    writeFileSync(path.join(criticsDir, MIXER_FILE), JSON.stringify(this.mixer.getState()));
  }

  load(criticsDir: string): void {
    if (!(this.mixer instanceof QmixMixer)) return;
    const file = path.join(criticsDir, MIXER_FILE);
    if (!existsSync(file)) {
      throw new DrmasError('CHECKPOINT_INVALID', "the checkpoint holds no QMIX mixer, which this run's critic.learner qmix has", {
        file,
        hint: 'resume with the config that wrote the checkpoint (config.json in its run directory), or start a new run without --resume',
      });
    }
    let state: QmixState;
    try {
      state = JSON.parse(readFileSync(file, 'utf8')) as QmixState;
    } catch (error) {
      throw new DrmasError('CHECKPOINT_INVALID', `the QMIX mixer's file is not JSON: ${(error as Error).message}`, { file });
    }
    try {
      this.mixer.setState(state);
    } catch (error) {
      if (error instanceof DrmasError) throw new DrmasError(error.code, error.message, { key: error.key, hint: error.hint, file });
      throw error;
    }
  }
}

/** `drmas info`'s note on how critics with `credit` credit their turns (nothing for the learners without a mixer). */
export function describeMixer(credit: CriticLearner['credit'], settings: MixerSettings): { credit?: string } {
  const td = `team TD(${settings.lambda}) error over joint steps, gamma ${settings.gamma}`;
  if (credit === 'vdn')
    return { credit: `VDN: Q_tot = sum of the roles' values; each turn's advantage is the ${td}, split equally among the roles present` };
  if (credit === 'qmix') {
    return {
      credit: `QMIX: monotonic mixing network (embedding ${settings.embedDim}, state ${settings.stateDim}, lr ${settings.optimizer.lr}); each turn's advantage is dQ_tot/dV_k / |dQ_tot/dV|^2 x the ${td}`,
    };
  }
  return {};
}
