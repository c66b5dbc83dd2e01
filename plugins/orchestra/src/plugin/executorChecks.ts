import { DrmasError } from '@drmas/core';
import { graphOf } from '../executor/GraphExecutor.js';
import { validateGraph } from '../graph/validateGraph.js';
import { blocksOf, type Orchestra } from '../orchestras/Orchestra.js';
import { TRACE_ALLOCATORS } from '../reward/traceAllocators.js';
import type { RewardSettings, RolloutSettings } from './orchestraConfig.js';

/**
 * At `validate`: the async executor samples each row from its own stream (it cannot know a row's position in a
 * lock-step call), runs the orchestra's graph (which must be valid), and a graph-only orchestra and the trace
 * allocators need it; rollout workers do not run it.
 */
export function checkExecutor(settings: RolloutSettings, reward: RewardSettings, orchestra: Orchestra): void {
  if (settings.executor.kind === 'lockstep') {
    blocksOf(orchestra);
    if (TRACE_ALLOCATORS.some((allocator) => allocator.name === reward.allocator)) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `reward.allocator "${reward.allocator}" reads episode traces, which only the async executor records`,
        {
          key: 'reward.allocator',
          hint: 'set rollout.executor.kind: async, or choose the allocator drmas or per_turn',
        },
      );
    }
    return;
  }
  if (settings.workers !== 'local') {
    throw new DrmasError(
      'CONFIG_INVALID',
      `rollout.executor.kind "async" cannot be used with rollout.workers "${settings.workers}": rollout workers run their prompt groups in lock-step`,
      {
        key: 'rollout.executor.kind',
        hint: 'set rollout.executor.kind: lockstep, or rollout.workers: local',
      },
    );
  }
  if (settings.sampleStreams === 'position') {
    throw new DrmasError(
      'CONFIG_INVALID',
      'rollout.sampleStreams "position" cannot be used with rollout.executor.kind "async": episodes share generate calls as they arrive, so a row has no fixed position',
      {
        key: 'rollout.sampleStreams',
        hint: 'remove rollout.sampleStreams (the async executor keys streams by row), or set rollout.executor.kind: lockstep',
      },
    );
  }
  const graph = graphOf(orchestra);
  validateGraph(graph, { agents: Object.keys(orchestra.agents), key: graph.configKey ?? 'orchestra.name' });
}
