import path from 'node:path';
import {
  redactUrl,
  RunFile,
  Stage,
  WorkerGroups,
  type ApplyContext,
  type Injected,
  type Plugin,
  type PluginConfig,
  type RegisterContext,
  type RolloutBatch,
  type StepContext,
} from '@drmas/core';
import { StepRollouts, type RolloutSettings } from '@drmas/plugin-orchestra';
import { bullmqSection, type BullmqSettings } from './bullmqConfig.js';
import type { EpisodeJobData } from './episodeJob.js';
import { queueNameFor } from './queueName.js';
import { RolloutQueue } from './RolloutQueue.js';
import { WEIGHTS_FOLDER, WeightsPublisher } from '../weights/WeightsPublisher.js';

export const PLUGIN_NAME = 'rollout-bullmq';
const bullmqSchema = { bullmq: bullmqSection };
type BullmqConfig = PluginConfig<typeof bullmqSchema>;
/** What the rollout tap uses: the orchestra's task draw and the worker groups whose weights the workers load. */
const SERVICES = { rollouts: StepRollouts, groups: WorkerGroups };

/**
 * Runs a step's episodes on rollout worker processes (`drmas rollout-worker`) when `rollout.workers` is `bullmq`: a `rollout`
 * tap ahead of the orchestra's draws the step's tasks and seed exactly as the orchestra does (`StepRollouts`),
 * publishes the current weights with a version, enqueues one job per prompt group, waits for all of them and returns
 * the trajectories in group order. Greedy baselines (`remax`) still run in the trainer's process.
 */
export class RolloutWorkersPlugin implements Plugin<unknown, typeof bullmqSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = bullmqSchema;
  private queue?: RolloutQueue;
  private publisher?: WeightsPublisher;

  register(ctx: RegisterContext<BullmqConfig>): void {
    ctx.bind(RunFile).toConstantValue({ path: WEIGHTS_FOLDER, kind: 'artifact' });
  }

  apply(kernel: ApplyContext<BullmqConfig>): void {
    // With `rollout.workers: local` the plugin stays out of the way: the orchestra runs the episodes in-process.
    if ((kernel.config.rollout as RolloutSettings | undefined)?.workers !== 'bullmq') return;
    const settings = (): BullmqSettings => kernel.config.bullmq;
    const services = kernel.inject(SERVICES);

    // Last in setup: the worker groups exist and a resumed run's weights are restored before version 0 is published.
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.LAST }, async (run) => {
      const name = settings().queue ?? queueNameFor(run.runDir);
      const config = kernel.configFile ? ` --config ${path.relative(kernel.cwd, kernel.configFile) || kernel.configFile}` : '';
      const where = settings().queue ? `--queue ${name}` : `--run-dir ${run.runDir}`;
      const redis = redactUrl(settings().redisUrl);
      // A password stays out of the hint: the worker reads it from the same config (or from --redis, filled in by hand).
      const password =
        redis === settings().redisUrl
          ? ''
          : ' (with the password of bullmq.redisUrl in place of ***, or without --redis to read it from --config)';
      const startHint = () => `drmas rollout-worker${config} ${where} --redis ${redis}${password}`;
      this.queue = await RolloutQueue.open(name, settings(), startHint, (message) => run.log(message));
      this.publisher = new WeightsPublisher(run.runDir);
      run.log(`rollout workers: queue ${name} at ${redis}; start workers with: ${startHint()}`);
    });

    kernel.hooks.rollout.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, (step) => this.rollout(services, step));

    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      const queue = this.queue;
      this.queue = undefined;
      await queue?.close();
    });
  }

  private async rollout(services: Injected<typeof SERVICES>, step: StepContext): Promise<RolloutBatch> {
    const queue = this.queue;
    const publisher = this.publisher;
    if (!queue || !publisher) throw new Error(`plugin "${PLUGIN_NAME}": rollout before setup opened the queue`);
    const { rollouts, groups: workerGroups } = services;
    const request = await rollouts.draw(step);
    // The weights the step samples with: those after the previous step's update (version 0 at the start of the run).
    const weights = await publisher.publish(step.step - 1, workerGroups.all());
    const groups: EpisodeJobData[] = request.tasks.map((task, group) => ({
      step: step.step,
      rolloutIndex: request.rolloutIndex,
      seed: request.seed,
      task,
      group,
      samplesPerTask: request.samplesPerTask,
      idPrefix: request.idPrefix,
      sampleStreams: request.sampleStreams ?? 'row',
      weights,
    }));
    const { trajectories, rolloutWorkers } = await queue.run(groups);
    step.metrics['perf/rollout_workers'] = rolloutWorkers.size;
    return rollouts.batch(step, trajectories);
  }
}

/** The plugin module's default export: `plugins: ['rollout-bullmq']`. */
export default function rolloutWorkersPlugin(): RolloutWorkersPlugin {
  return new RolloutWorkersPlugin();
}
