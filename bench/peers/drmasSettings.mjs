// drmas's settings of a peer-benchmark job, read from its resolved config (presets, file, --set: what `drmas train`
// would run), for the TRL side to copy (bench/peers/trl_run.py's grpo_config; the mapping is in bench/README.md).
import { createKernel } from '@drmas/core';
import { planWorkerGroups } from '@drmas/plugin-trainer';
import { REPO_ROOT } from '../lib/benchOptions.mjs';

/** drmas's loss aggregations that TRL has a `loss_type` for (over one mini-batch per step, as here). */
const TRL_LOSS_TYPES = { 'token-mean': 'dapo', 'seq-mean-token-mean': 'grpo' };

/** The settings of `config` with `overrides`, in the shape trl_run.py reads; throws where TRL has no equivalent. */
export async function peerSettings(config, overrides = []) {
  const { config: resolved } = await createKernel({ cwd: REPO_ROOT, configPath: config, overrides });
  const plans = planWorkerGroups(resolved);
  if (plans.length !== 1) throw new Error(`bench/peers: ${config} trains ${plans.length} worker groups; the peer jobs train one model`);
  const [{ training, settings: model }] = plans;
  const { loss } = resolved.algorithm;
  const aggregation = loss.aggregation ?? 'token-mean';
  const trlLossType = TRL_LOSS_TYPES[aggregation];
  if (!trlLossType) throw new Error(`bench/peers: TRL has no loss_type for drmas's aggregation "${aggregation}"`);
  if (training.miniBatches !== 1) throw new Error('bench/peers: the peer jobs take one optimizer step per batch (miniBatches 1)');
  const solver = resolved.agents.solver;
  const verifier = resolved.agents.verifier;
  const { optimizer } = model;
  return {
    advantage: resolved.algorithm.advantage,
    normalizeByStd: resolved.algorithm.normalizeByStd,
    promptsPerStep: resolved.rollout.promptsPerStep,
    samplesPerPrompt: resolved.rollout.samplesPerPrompt,
    maxNewTokens: solver.sampling.maxNewTokens,
    temperature: solver.sampling.temperature,
    topP: solver.sampling.topP,
    invalidPenalty: solver.invalidPenalty,
    verifier: verifier && {
      maxNewTokens: verifier.sampling.maxNewTokens,
      temperature: verifier.sampling.temperature,
      topP: verifier.sampling.topP,
      invalidPenalty: verifier.invalidPenalty,
      stop: verifier.stop,
    },
    maxLoops: resolved.orchestra.maxLoops,
    checkSteps: resolved.env.checkSteps,
    microBatchSize: training.microBatchSize,
    epochs: training.epochs,
    lr: optimizer.lr,
    betas: optimizer.betas,
    eps: optimizer.eps,
    weightDecay: optimizer.weightDecay,
    maxGradNorm: optimizer.maxGradNorm,
    schedule: optimizer.schedule,
    paramGroups: optimizer.paramGroups,
    clipRatio: loss.clipRatio,
    klCoef: loss.klCoef,
    entropyCoef: loss.entropyCoef,
    aggregation,
    trlLossType,
    oldLogProbs: resolved.trainer.oldLogProbs,
  };
}
