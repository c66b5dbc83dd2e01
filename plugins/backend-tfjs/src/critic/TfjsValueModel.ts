import * as tf from '@tensorflow/tfjs-core';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DrmasError,
  lossTotalsInput,
  trainedColumns,
  type OptimizerSettings,
  type UpdateResult,
  type ValueModel,
  type ValuesRequest,
  type ValueUpdateRequest,
} from '@drmas/core';
import { promptResponseLayout, readSafetensors, serializeSafetensors, type PromptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { loadDecoderModel, saveDecoderModel } from '../model/modelCheckpoint.js';
import { predictingHidden } from '../model/responseLogProbs.js';
import { AdamW } from '../training/AdamW.js';
import { accumulatedStep, microBatchesOf } from '../training/accumulatedStep.js';
import { tfjsTensorOps } from '../training/TfjsTensorOps.js';

/** The value head's file in a critic's checkpoint folder, beside the trunk's Hugging Face files. */
export const VALUE_HEAD_FILE = 'value_head.safetensors';
/** The head's tensors, named like transformers' `*ForTokenClassification` score layer with one label (veRL's critic). */
const HEAD_WEIGHT = 'score.weight';
const HEAD_BIAS = 'score.bias';
/** Rows x (prompt + response) columns per forward pass when computing values (the wasm heap's comfort, as for scoring). */
const TOKENS_PER_CHUNK = 8192;

let headCounter = 0;

/** Where a critic's trunk comes from: a decoder of its own (trained), or the policy's (read, never trained by the critic). */
export type CriticTrunk = { own: DecoderModel } | { shared: () => DecoderModel };

/**
 * A critic on tfjs: a decoder trunk and a scalar head `score` (`[1, hidden]` weight and a bias), zero-initialized so
 * that every value starts at 0. The value of response token t is the head on the hidden state that predicts t. With a
 * trunk of its own, the value loss trains trunk and head; on the policy's trunk (`shareTrunk`), the head alone.
 */
export class TfjsValueModel implements ValueModel {
  readonly optimizer = new AdamW();
  private head: Map<string, tf.Variable>;
  private settings: OptimizerSettings | undefined;

  constructor(
    readonly name: string,
    readonly runtime: string,
    private trunk: CriticTrunk,
  ) {
    const hidden = this.trunkModel.config.hiddenSize;
    headCounter += 1;
    this.head = new Map([
      [HEAD_WEIGHT, tf.variable(tf.zeros([1, hidden]), true, `drmas/critic/${headCounter}/${HEAD_WEIGHT}`)],
      [HEAD_BIAS, tf.variable(tf.zeros([1]), true, `drmas/critic/${headCounter}/${HEAD_BIAS}`)],
    ]);
  }

  private get trunkModel(): DecoderModel {
    return 'own' in this.trunk ? this.trunk.own : this.trunk.shared();
  }

  /** What the value loss trains: the head, and the trunk when it is the critic's own. */
  private trained(): Map<string, tf.Variable> {
    return 'own' in this.trunk ? new Map([...this.trunk.own.weights, ...this.head]) : this.head;
  }

  parameterNames(): string[] {
    return [...this.trained().keys()];
  }

  /** `[rows, responseColumns]` values of a layout; call inside `tf.tidy` or `tf.variableGrads`. */
  private forward(layout: PromptResponseLayout, differentiable: boolean): tf.Tensor2D {
    const hidden = predictingHidden(this.trunkModel, layout, differentiable && 'own' in this.trunk);
    const values = tf.add(tf.matMul(hidden, this.head.get(HEAD_WEIGHT)!, false, true), this.head.get(HEAD_BIAS)!);
    return tf.reshape(values, [layout.rows, layout.responseColumns]);
  }

  async values(request: ValuesRequest): Promise<Float32Array> {
    const { batch, rows } = request.batch;
    const R = batch.responseLength;
    const out = new Float32Array(rows.length * R);
    const promptOf = (row: number) => request.contexts?.get(row) ?? batch.promptIds[row]!;
    let start = 0;
    while (start < rows.length) {
      let end = start + 1;
      let longest = promptOf(rows[start]!).length + batch.responseLengths[rows[start]!]!;
      while (end < rows.length) {
        const row = rows[end]!;
        const next = Math.max(longest, promptOf(row).length + batch.responseLengths[row]!);
        if ((end + 1 - start) * next > TOKENS_PER_CHUNK) break;
        longest = next;
        end++;
      }
      const chunk = rows.subarray(start, end);
      const responses = Array.from(chunk, (r) => batch.responseIds.subarray(r * R, r * R + batch.responseLengths[r]!));
      const layout = promptResponseLayout(Array.from(chunk, promptOf), responses);
      const values = tf.tidy(() => this.forward(layout, false));
      const data = await values.data();
      values.dispose();
      const r = layout.responseColumns;
      responses.forEach((response, i) => out.set(data.subarray(i * r, i * r + response.length), (start + i) * R));
      start = end;
    }
    return out;
  }

  async update(request: ValueUpdateRequest): Promise<UpdateResult> {
    const { batch } = request.batch;
    if (!batch.values) throw new Error(`critic ${this.name}: the batch has no values to clip the value loss against`);
    this.settings = request.optimizer;
    const oldValues = batch.values;
    const step = await accumulatedStep({
      weights: this.trained(),
      microBatches: microBatchesOf(request.batch.rows, request.microBatchSize),
      lossOf: (micro) => {
        const { columns, take, responseMask } = trainedColumns(batch, micro);
        const R = batch.responseLength;
        const prompts = Array.from(micro, (r) => request.contexts?.get(r) ?? batch.promptIds[r]!);
        const responses = Array.from(micro, (r) => batch.responseIds.subarray(r * R, r * R + columns));
        const layout = promptResponseLayout(prompts, responses, columns);
        const tensor = (flat: ArrayLike<number>) => tf.tensor2d(take(flat), [micro.length, columns]);
        const out = request.loss.compute(tfjsTensorOps, {
          values: this.forward(layout, true),
          oldValues: tensor(oldValues),
          returns: tensor(batch.returns),
          responseMask: tf.tensor2d(responseMask(), [micro.length, columns]),
          totals: lossTotalsInput(tfjsTensorOps, request.totals),
        });
        return { loss: out.loss as tf.Scalar, sums: out.metrics };
      },
      optimizer: this.optimizer,
      settings: request.optimizer,
      lrScale: request.lrScale,
      acceptGradNorm: request.acceptGradNorm,
    });
    const metrics = { ...step.sums, skipped_nonfinite: step.nonFinite ? 1 : 0 };
    return {
      loss: step.lossSum,
      gradNorm: step.gradNorm,
      skipped: step.skipped,
      learningRate: request.optimizer.lr * request.lrScale,
      metrics,
    };
  }

  async save(dir: string): Promise<void> {
    const head = new Map<string, { shape: number[]; data: Float32Array }>();
    for (const [name, v] of this.head) head.set(name, { shape: [...v.shape], data: (await v.data()) as Float32Array });
    const files = { [VALUE_HEAD_FILE]: serializeSafetensors(head, { dtype: 'F32' }), ...(await this.optimizer.serialize(this.settings)) };
    if ('own' in this.trunk) {
      await saveDecoderModel(dir, this.trunk.own, { extraFiles: files });
      return;
    }
    await mkdir(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  }

  async load(dir: string): Promise<void> {
    if ('own' in this.trunk) {
      const loaded = await loadDecoderModel(dir);
      this.trunk.own.dispose();
      this.trunk = { own: loaded.model };
    }
    const file = join(dir, VALUE_HEAD_FILE);
    const { tensors } = await readSafetensors(file);
    for (const [name, v] of this.head) {
      const saved = tensors.get(name);
      if (!saved || saved.data.length !== v.size) {
        throw new DrmasError('CHECKPOINT_INVALID', `the value head's ${name} is missing or does not match shape [${v.shape.join(', ')}]`, {
          file,
          hint: "resume with the critic settings that wrote the checkpoint (config.json in its run directory): the head must fit the critic's trunk",
        });
      }
      v.assign(tf.tensor(saved.data, v.shape, 'float32'));
    }
    await this.optimizer.load(dir, this.trained());
  }

  dispose(): void {
    this.optimizer.dispose();
    for (const v of this.head.values()) v.dispose();
    if ('own' in this.trunk) this.trunk.own.dispose();
  }
}
