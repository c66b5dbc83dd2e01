import {
  chosenBy,
  LossFunction,
  SeededRng,
  type ApplyContext,
  type ChosenBy,
  type Injected,
  type Metrics,
  type StepContext,
  type TrainingBatch,
} from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { agentDiagnosticsSettings, measuresInflationAt } from '../config/trainingConfig.js';
import { agentRewardMetrics, diagnoseAgentRewards, type AgentRewardDiagnosis } from '../agentDiagnostics/agentRewardStatistics.js';
import { LearningRateSchedule } from '../optimizer/LearningRateSchedule.js';
import type { SpikeGuards } from '../spikeGuard/GradNormSpikeGuard.js';
import { oldLogProbSource, type WorkerGroupUpdate } from '../updateWorkerGroup.js';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';

/**
 * What one worker group's update at a step runs with (the loss, its random stream, the learning-rate scale, the spike
 * guard, the agent diagnostics), for whichever plugin orders the updates: every group at once or HAPPO's sequence.
 */
export class WorkerGroupUpdates {
  /** `trainer.agentDiagnostics`' statistics of the step's batch, shared by its worker groups' updates. */
  private readonly diagnoses = new WeakMap<TrainingBatch, AgentRewardDiagnosis>();
  private readonly services: Injected<{ loss: ChosenBy<LossFunction> }>;

  constructor(
    private readonly kernel: ApplyContext<TrainerConfig>,
    /** The worker groups' gradient-norm spike guards, by model id (none unless a model sets `spikeGuard`). */
    private readonly spikeGuards: SpikeGuards | undefined,
  ) {
    this.services = kernel.inject({ loss: chosenBy(LossFunction, 'algorithm.loss') });
  }

  /** The loss every policy update of the run trains with (`algorithm.loss`, or online DPO's). */
  loss(): LossFunction {
    return this.services.loss;
  }

  /** The update of `group` at `step`; `rngLabel` names its random stream (the group's id, or HAPPO's role). */
  options(group: TrainedWorkerGroup, step: StepContext, rngLabel: string, batch: TrainingBatch): WorkerGroupUpdate {
    const { seed, steps } = this.kernel.config.trainer;
    const trainer = this.kernel.config.trainer;
    const guard = this.spikeGuards?.of(group.id);
    const diagnostics = agentDiagnosticsSettings(trainer);
    const schedule = new LearningRateSchedule(group.training.schedule.kind, group.training.schedule.warmupSteps, steps);
    return {
      loss: this.loss(),
      rng: new SeededRng(seed).fork(`update/${step.step}/${rngLabel}`),
      metrics: step.metrics,
      distributions: step.distributions,
      lrScale: schedule.scaleAt(step.step - 1),
      oldLogProbs: oldLogProbSource(trainer.oldLogProbs, {
        optimizerSteps: group.training.miniBatches * group.training.epochs,
        samplesOnTrainer: group.rollout === group.trainer,
      }),
      spikeGuard: guard && { guard, log: (line: string) => step.run.log(line), step: step.step },
      ...(diagnostics && {
        agentDiagnosis: this.agentDiagnosis(batch, step.metrics),
        measureInflation: measuresInflationAt(diagnostics, step.step),
      }),
    };
  }

  /**
   * The batch's per-agent reward statistics (`trainer.agentDiagnostics`), taken once per step and put in its metrics
   * (`agent/<role>/reward_mean` is the step metrics' own, over all the agent's turns).
   */
  private agentDiagnosis(batch: TrainingBatch, metrics: Metrics): AgentRewardDiagnosis {
    let diagnosis = this.diagnoses.get(batch);
    if (diagnosis) return diagnosis;
    diagnosis = diagnoseAgentRewards(batch);
    this.diagnoses.set(batch, diagnosis);
    for (const agent of diagnosis.agents) Object.assign(metrics, agentRewardMetrics(agent));
    return diagnosis;
  }
}
