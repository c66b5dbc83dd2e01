import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  DrmasError,
  Engines,
  didYouMean,
  lossTotals,
  longestResponse,
  MetricsSink,
  numberOption,
  SeededRng,
  type CliCommand,
  type PolicyBackend,
  type ResolvedConfig,
  type RunContext,
  type Kernel,
} from '@drmas/core';
import { DPO_VARIANTS, DpoLossFunction, type DpoVariant } from '@drmas/plugin-algorithms';
import { pairRows, preferenceBatch, readPreferencePairs, type PreferencePair } from '../preference/preferencePairs.js';
import { scoreInto } from '../updateWorkerGroup.js';
import { planWorkerGroups } from '../workerGroupPlan.js';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';
import {
  OFFLINE_OPTIONS,
  offlineHelp,
  offlineOptimizer,
  OfflineProgress,
  offlineSettings,
  offlineTurn,
  openOfflineKernel,
  saveOfflineModel,
  viewTokens,
} from './offlineTraining.js';

const DEFAULTS = { epochs: 1, batchSize: 8, dataExample: 'pairs.jsonl' };

/** The agent of a pair: its own, or the config's only agent. */
function agentOf(pair: PreferencePair, known: readonly string[], file: string): string {
  if (pair.agent !== undefined) return pair.agent;
  if (known.length === 1) return known[0]!;
  throw new DrmasError('DATASET_INVALID', `line ${pair.line} names no "agent", and the config has ${known.length} agents`, {
    file,
    key: `line ${pair.line}.agent`,
    hint: `give each line an "agent": one of ${known.join(', ')}`,
  });
}

/** Whether `dir` is a Hugging Face model folder (a run directory has a config.json too, but no weights). */
function isModelFolder(dir: string): boolean {
  return (
    existsSync(path.join(dir, 'config.json')) &&
    (existsSync(path.join(dir, 'model.safetensors')) || existsSync(path.join(dir, 'model.safetensors.index.json')))
  );
}

/**
 * `--ref DIR`'s model folder for a worker group: DIR/<model id> (the output of `drmas sft` or `drmas dpo`, a
 * checkpoints/step-NNNNNN folder), else DIR itself (a Hugging Face model folder).
 */
function referenceFolder(dir: string, groupId: string): string {
  if (isModelFolder(path.join(dir, groupId))) return path.join(dir, groupId);
  if (isModelFolder(dir)) return dir;
  throw new DrmasError('INVALID_ARGUMENT', `--ref ${dir} holds no model for worker group ${groupId}`, {
    key: '--ref',
    hint: `give a model folder (config.json and model.safetensors), or a folder with ${groupId}/ in it (an sft or dpo output, a checkpoints/step-NNNNNN folder)`,
  });
}

/** The reference engine of a group: a second model from `--ref`, on the engine that trains the group, with its settings. */
async function openReference(kernel: Kernel, config: ResolvedConfig, group: TrainedWorkerGroup, run: RunContext, dir: string) {
  const plan = planWorkerGroups(config).find((p) => p.id === group.id)!;
  const factory = kernel.get(Engines).get(group.engine, `models.${group.id}.backend`);
  const model = referenceFolder(dir, group.id);
  const settings = { ...plan.settings, seed: plan.settings.seed ?? config.trainer.seed, model } as Record<string, unknown>;
  return factory.create({ modelId: group.id, settings, run, purpose: 'reference' });
}

export const dpo: CliCommand = {
  name: 'dpo',
  summary: 'direct preference optimisation of each worker group on JSONL preference pairs (prompt/chosen/rejected)',
  usage:
    'drmas dpo --config PATH --data PAIRS.jsonl [--ref DIR] [--beta 0.1] [--loss sigmoid|robust|hinge|ipo] [--label-smoothing E] [--epochs 1] [--batch-size 8] [--lr X] [--schedule cosine|linear|constant] [--warmup-steps N] [--out DIR] [--dtype float32|bfloat16]',
  help: [
    ...offlineHelp('dpo', 'pairs', DEFAULTS),
    [
      '--data FILE',
      'JSONL of {"prompt", "chosen", "rejected", "agent"}: prompt as the agent sends it; "agent" may be left out when the config has one',
    ],
    ['--ref DIR', "the frozen reference model (a model folder, or one with <model id>/ folders); default: each group's initial weights"],
    ['--beta X', 'strength of the pull towards the reference (TRL: beta; for ipo, tau); default 0.1'],
    ['--loss L', 'sigmoid (DPO, default), robust (robust DPO), hinge (RSO) or ipo, as in TRL'],
    ['--label-smoothing E', 'probability that a label is flipped, in [0, 0.5): cDPO for sigmoid, the noise rate of robust; default 0'],
  ],
  options: {
    ...OFFLINE_OPTIONS,
    ref: { type: 'string' },
    beta: { type: 'string' },
    loss: { type: 'string' },
    'label-smoothing': { type: 'string' },
  },
  async run({ values }, io) {
    const settings = offlineSettings(values, DEFAULTS);
    const variant = (values.loss as string | undefined) ?? 'sigmoid';
    if (!(DPO_VARIANTS as readonly string[]).includes(variant))
      throw new DrmasError('INVALID_ARGUMENT', `--loss must be one of ${DPO_VARIANTS.join(', ')}, got "${variant}"`, {
        key: '--loss',
        hint: `e.g. --loss sigmoid.${didYouMean(variant, DPO_VARIANTS)}`,
      });
    const beta = numberOption(values, 'beta', { min: 0, exclusiveMin: true, example: 0.1 }) ?? 0.1;
    const labelSmoothing = numberOption(values, 'label-smoothing', { min: 0, max: 0.5, example: 0.1 }) ?? 0;
    if (labelSmoothing === 0.5)
      throw new DrmasError('INVALID_ARGUMENT', '--label-smoothing 0.5 says every label is a coin flip, so the pairs teach nothing', {
        key: '--label-smoothing',
        hint: 'give a flip probability below 0.5, e.g. --label-smoothing 0.1',
      });
    const loss = new DpoLossFunction({ variant: variant as DpoVariant, beta, labelSmoothing });
    const ref = values.ref === undefined ? undefined : path.resolve(io.cwd, values.ref as string);
    if (ref !== undefined && !existsSync(ref))
      throw new DrmasError('INVALID_ARGUMENT', `--ref ${ref} does not exist`, {
        key: '--ref',
        hint: 'give the folder of the reference model',
      });
    const file = path.resolve(io.cwd, values.data as string);
    const data = readPreferencePairs(file);
    let agents: string[] = [];
    const { kernel, config, run, outDir, groups, log } = await openOfflineKernel(
      'dpo',
      values,
      io,
      (known, resolved) => {
        // A --ref without a model for some worker group is found before any model loads.
        if (ref !== undefined) {
          for (const plan of planWorkerGroups(resolved)) {
            // TRL's reference for a PEFT model is its base with the adapter off: here the adapter at PEFT's init.
            if (plan.lora) {
              throw new DrmasError(
                'INVALID_ARGUMENT',
                `--ref is given, but agent "${plan.agents[0]}" trains a LoRA adapter (agents.${plan.agents[0]}.lora)`,
                {
                  key: '--ref',
                  hint: `leave --ref out: a LoRA agent's reference is its frozen base, model ${plan.model} as the config loads it`,
                },
              );
            }
            referenceFolder(ref, plan.id);
          }
        }
        return (agents = data.map((pair) => agentOf(pair, known, file)));
      },
      'preference pairs',
    );
    try {
      const sinks = kernel.getAll(MetricsSink);
      for (const group of groups) {
        const codec = group.codec!;
        const eos = codec.eosTokenId === undefined ? [] : [codec.eosTokenId];
        const encode = (text: string) => [...codec.encode(text, { addSpecialTokens: false }), ...eos];
        const mine = data.flatMap((pair, i) => (group.agents.includes(agents[i]!) ? [{ pair, agent: agents[i]! }] : []));
        if (mine.length === 0) continue;
        const batch = preferenceBatch(
          mine.map(({ pair, agent }) => {
            const { line } = pair;
            const promptIds = codec.encode(pair.prompt, { addSpecialTokens: false });
            const chosen = encode(pair.chosen);
            const rejected = encode(pair.rejected);
            if (chosen.length === 0 || rejected.length === 0)
              throw new DrmasError('DATASET_INVALID', `line ${line}: an empty response, with no end-of-sequence token to train`, {
                file,
                key: `line ${line}.${chosen.length === 0 ? 'chosen' : 'rejected'}`,
                hint: 'give both responses some text',
              });
            return {
              chosen: offlineTurn(promptIds, chosen, agent, group.id, `dpo-${line}-chosen`),
              rejected: offlineTurn(promptIds, rejected, agent, group.id, `dpo-${line}-rejected`),
            };
          }),
        );
        // The reference's sequence log-probs are computed once: before any update, the trainer is the initial policy.
        batch.refLogProbs = new Float32Array(batch.rows * batch.responseLength);
        const reference: PolicyBackend = ref === undefined ? group.trainer : await openReference(kernel, config, group, run, ref);
        try {
          await scoreInto(reference, batch.all(), batch.refLogProbs, false);
        } finally {
          if (reference !== group.trainer) reference.dispose();
        }
        log(
          `dpo ${group.id}: ${mine.length} pairs; reference ${ref === undefined ? 'the initial weights' : ref}; ${variant} loss, beta ${beta}`,
        );
        const rng = new SeededRng(config.trainer.seed).fork(`dpo/${group.id}`);
        const { epochs, batchSize } = settings;
        const totalSteps = epochs * Math.ceil(mine.length / batchSize);
        const { optimizer, schedule } = offlineOptimizer(group, settings, totalSteps);
        // Micro-batches hold whole pairs: an odd micro-batch size is rounded up.
        const microBatchSize = group.training.microBatchSize + (group.training.microBatchSize % 2);
        const progress = new OfflineProgress(log, `dpo ${group.id}`, totalSteps);
        let stepIndex = 0;
        for (let epoch = 1; epoch <= epochs; epoch++) {
          const order = rng.shuffle(mine.map((_, i) => i));
          const sums: Record<string, number> = {};
          let steps = 0;
          for (let start = 0; start < order.length; start += batchSize) {
            const view = pairRows(batch, order.slice(start, start + batchSize));
            const result = await group.trainer.update({
              batch: view,
              totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize }),
              loss,
              microBatchSize,
              optimizer,
              lrScale: schedule.scaleAt(stepIndex++),
            });
            const values = { loss: result.loss, ...result.metrics };
            for (const [k, v] of Object.entries(values)) sums[k] = (sums[k] ?? 0) + v;
            steps++;
            progress.step(
              {
                loss: result.loss,
                'rewards/accuracies': result.metrics['rewards/accuracies']!,
                'rewards/margins': result.metrics['rewards/margins']!,
              },
              result.learningRate,
              viewTokens(view),
            );
          }
          const metrics: Record<string, number> = { [`dpo/${group.id}/pairs`]: mine.length };
          for (const [k, v] of Object.entries(sums)) metrics[`dpo/${group.id}/${k.replace(/^actor\//, '')}`] = v / steps;
          for (const sink of sinks) await sink.write({ step: epoch, metrics });
          log(
            `dpo ${group.id} epoch ${epoch}/${epochs}: loss ${(sums.loss! / steps).toFixed(4)}, accuracy ${(sums['rewards/accuracies']! / steps).toFixed(3)}, margin ${(sums['rewards/margins']! / steps).toFixed(4)} over ${mine.length} pairs`,
          );
        }
        await saveOfflineModel(group, outDir, settings, log);
      }
    } finally {
      await kernel.shutdown();
    }
    return 0;
  },
};
