export { default, TrainerPlugin } from './TrainerPlugin.js';
export { planWorkerGroups, type WorkerGroupPlan } from './workerGroupPlan.js';
export { WorkerGroupsService, type TrainedWorkerGroup } from './WorkerGroupsService.js';
export { updateWorkerGroup } from './updateWorkerGroup.js';
export { batchMetrics } from './stepMetrics.js';
export { appendRollouts } from './RolloutLog.js';
export { restoreCheckpoint, saveCheckpoint } from './Checkpoints.js';
export { sft as sftCommand, demonstrationTurn, readDemonstrations, type Demonstration } from './cli/sftCommand.js';
