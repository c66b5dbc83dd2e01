export { default, PLUGIN_NAME, RolloutWorkersPlugin } from './plugin/RolloutWorkersPlugin.js';
export { bullmqSection, type BullmqSettings } from './plugin/bullmqConfig.js';
export { EPISODE_JOB, type EpisodeJobData, type EpisodeJobResult, type WeightsRelease } from './plugin/episodeJob.js';
export { queueNameFor } from './plugin/queueName.js';
export { checkRedis, KEY_PREFIX } from './plugin/redisConnection.js';
export { RolloutQueue, type StepEpisodes } from './plugin/RolloutQueue.js';
export { RolloutWorker, type RolloutWorkerOptions } from './worker/RolloutWorker.js';
export { WEIGHTS_FOLDER, WeightsPublisher } from './weights/WeightsPublisher.js';
export { rolloutWorkerCommand } from './cli/rolloutWorkerCommand.js';
