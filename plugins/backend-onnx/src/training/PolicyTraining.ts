import type { TrainingSnapshot, UpdateRequest, UpdateResult } from '@drmas/core';
import { hasAdamWState, type CheckpointFileContents } from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import type { DecoderSessions } from '../DecoderSessions.js';
import { trainingProvider } from '../ExecutionProvider.js';
import type { SharedSessions } from '../SharedSessions.js';
import type { WeightState } from '../weights/WeightState.js';
import { HostAdamW, type HostAdamWState } from './HostAdamW.js';
import type { BackwardSegmentsSetting } from './LargeModelMemory.js';
import { OnnxTrainer, type TrainingSession } from './OnnxTrainer.js';

export interface PolicyTrainingOptions {
  /** The engine's name (in its snapshots). */
  engine: string;
  /** Extra onnxruntime session options. */
  sessionOptions?: OrtModule.InferenceSession.SessionOptions;
  /** Training sessions shared with other engines of the same architecture. */
  trainingSessions?: SharedSessions<TrainingSession>;
  /** The layers' segments a training run's backward takes (default `auto`). */
  backwardSegments?: BackwardSegmentsSetting;
  /** The run's memory budget in bytes, a large model's default micro-batch's share of which (`OnnxTrainerOptions`). */
  memoryBudget?: number;
}

/** Weights and AdamW state copied to host memory (about three float32 copies of the model). */
interface OnnxTrainingSnapshot extends TrainingSnapshot {
  readonly weights: Map<string, Float32Array>;
  readonly optimizer: HostAdamWState;
  readonly owner: PolicyTraining;
}

function isSnapshotOf(snapshot: TrainingSnapshot, owner: PolicyTraining): snapshot is OnnxTrainingSnapshot {
  return 'owner' in snapshot && snapshot.owner === owner && 'weights' in snapshot && 'optimizer' in snapshot;
}

/**
 * An engine's training: the `OnnxTrainer` made on the first update (or optimizer-state load) over the `WeightState`'s
 * buffers, which it trains in place; its optimizer state as checkpoints save and load it; training snapshots.
 */
export class PolicyTraining {
  /** Made on the first update (or optimizer-state load); trains the weights in place. */
  private trainerRef: Promise<OnnxTrainer> | undefined;

  constructor(
    private readonly state: WeightState,
    private readonly sessions: DecoderSessions,
    private readonly options: PolicyTrainingOptions,
  ) {}

  /** Whether a trainer shares the weights' buffers (new values are then copied into them). */
  get started(): boolean {
    return this.trainerRef !== undefined;
  }

  /**
   * One optimizer step (`OnnxTrainer.update`: micro-batches, clipping, the spike guard's `acceptGradNorm`, AdamW with
   * param groups) on the engine's own weight buffers; the derived graph weights are then rewritten in place, so the
   * next `generate` / `score` samples the updated policy.
   */
  async update(request: UpdateRequest): Promise<UpdateResult> {
    const result = await (await this.trainer()).update(request);
    if (!result.skipped) await this.sessions.weightsChanged();
    return result;
  }

  /** The trainer, made on first use over the weights (shared, not copied). */
  private trainer(): Promise<OnnxTrainer> {
    const { state } = this;
    const lora = state.lora && state.adapter && { settings: state.lora.settings, adapter: state.adapter, seed: state.lora.seed };
    this.trainerRef ??= OnnxTrainer.create(state.config, state.weights, this.options.sessionOptions, {
      adopt: true,
      lora,
      provider: trainingProvider(this.sessions.provider.provider),
      sessions: this.options.trainingSessions,
      layout: state.layout,
      backwardSegments: this.options.backwardSegments,
      memoryBudget: this.options.memoryBudget,
    });
    return this.trainerRef;
  }

  /** AdamW's state of the trained tensors as checkpoint files (the tfjs backend's); zero moments before a first update. */
  async optimizerFiles(): Promise<Record<string, CheckpointFileContents>> {
    const trainer = this.trainerRef && (await this.trainerRef);
    return (trainer?.optimizer ?? new HostAdamW()).serialize(this.state.trained, trainer?.settings);
  }

  /**
   * The optimizer state saved in `dir` (written by either backend), loaded when `asked`, or by default when the folder
   * has it; otherwise the optimizer restarts.
   */
  async loadOptimizer(dir: string, asked: boolean | undefined): Promise<void> {
    const hasState = await hasAdamWState(dir);
    if (asked ?? hasState) await (await this.trainer()).optimizer.load(dir, this.state.trained);
    else if (this.trainerRef) (await this.trainerRef).optimizer.reset();
  }

  async snapshot(): Promise<TrainingSnapshot> {
    const trainer = await this.trainer();
    const snapshot: OnnxTrainingSnapshot = {
      engine: this.options.engine,
      weights: new Map([...this.state.trained].map(([name, w]) => [name, w.data.slice()])),
      optimizer: trainer.optimizer.snapshot(),
      owner: this,
    };
    return snapshot;
  }

  async restore(snapshot: TrainingSnapshot): Promise<void> {
    if (!isSnapshotOf(snapshot, this)) {
      throw new Error(`policy backend '${this.options.engine}' was handed a training snapshot it did not make`);
    }
    for (const [name, data] of snapshot.weights) this.state.trained.get(name)!.data.set(data);
    (await this.trainer()).optimizer.restore(snapshot.optimizer);
    await this.sessions.weightsChanged();
  }

  /** Lets go of the trainer and its sessions (a later update makes a new one). */
  async release(): Promise<void> {
    const pending = this.trainerRef;
    this.trainerRef = undefined;
    if (pending) await (await pending).release();
  }
}
