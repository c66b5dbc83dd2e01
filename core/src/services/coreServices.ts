import { Agent } from '../agents/AgentRegistry.js';
import { LossFunction } from '../compute/TensorOps.js';
import { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { Token } from '../di/Token.js';
import { Rng } from '../random/Rng.js';
import { AdvantageEstimator } from './AdvantageEstimator.js';
import { AnswerFormat } from './AnswerFormat.js';
import { BackendFactory } from '../engines/BackendFactory.js';
import { Engines } from '../engines/Engines.js';
import { BatchInputSource } from './BatchInputSource.js';
import { Checkpointable } from './Checkpointable.js';
import { Environment } from './Environment.js';
import { InfoSection } from './InfoSection.js';
import { MemoryEstimates } from './MemoryEstimates.js';
import { MetricsSink } from './MetricsSink.js';
import { QuestionSet } from './QuestionSet.js';
import { Contributions } from './Contributions.js';
import { RunFile } from './RunFile.js';
import { RunDirectoryLock } from './RunDirectoryLock.js';
import { Rollouts } from './Rollouts.js';
import { Tool } from './Tool.js';
import { WorkerGroups } from './WorkerGroups.js';
import { Secrets } from '../secrets/Secrets.js';

/** The services core declares: every kernel can name them in messages, and `drmas info` lists the named ones. */
export function coreServices(): Token<unknown>[] {
  return [
    ResolvedConfig,
    Secrets,
    Contributions,
    Rollouts,
    RunDirectoryLock,
    Agent,
    AdvantageEstimator,
    BatchInputSource,
    BackendFactory,
    Engines,
    Environment,
    QuestionSet,
    AnswerFormat,
    Tool,
    LossFunction,
    WorkerGroups,
    MetricsSink,
    RunFile,
    Checkpointable,
    InfoSection,
    MemoryEstimates,
    Rng,
  ];
}

/** @deprecated since 0.2.0: `coreServices`. */
export const coreRoles = coreServices;
