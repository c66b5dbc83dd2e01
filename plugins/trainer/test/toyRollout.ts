import { TempProject } from '../../../test/support/tempProject.js';

/**
 * A rollout plugin on the real tiny model: two agents each sample a few tokens for a fixed prompt; the episode
 * outcome is the share of sampled ids below 256 (learnable, deterministic given the tokens).
 */
export const TOY_ROLLOUT_PLUGIN = `
import { makeTurn, SeededRng, WorkerGroups } from '@drmas/core';
export default () => ({
  name: 'toy-rollout',
  apply(kernel) {
    kernel.hooks.rollout.tapPromise('toy-rollout', async (step) => {
      const groups = kernel.get(WorkerGroups);
      const trajectories = [];
      for (let g = 0; g < 2; g++) {
        const groupId = 's' + step.step + 'g' + g;
        const rows = Array.from({ length: 4 }, (_, n) => ({ groupId, trajectoryId: groupId + 't' + n, taskId: 'p' + g, done: true, turns: [] }));
        for (const [index, agent] of ['left', 'right'].entries()) {
          const group = groups.forAgent(agent);
          const seed = new SeededRng(kernel.config.trainer.seed).fork(agent + '/' + groupId).nextUint32();
          const prompt = [1 + g, 2, 3 + index];
          const out = await group.rollout.generate({ prompts: rows.map(() => prompt), maxNewTokens: 6, temperature: 1, seed, stopTokenIds: [] });
          rows.forEach((row, r) => row.turns.push(makeTurn({
            groupId, trajectoryId: row.trajectoryId, agentId: agent, workerGroupId: group.id, round: 0, index,
            promptIds: prompt, responseIds: out.tokenIds[r], logProbs: out.logProbs[r], valid: true, finishReason: out.finishReasons[r],
          })));
        }
        for (const row of rows) {
          const ids = row.turns.flatMap((t) => t.responseIds);
          row.outcome = ids.filter((id) => id < 256).length / ids.length;
          for (const turn of row.turns) turn.reward = row.outcome;
        }
        trajectories.push(...rows);
      }
      return { trajectories, metrics: {} };
    });
  },
});
`;

/**
 * A temporary project that trains two tiny wasm models, `left` and `right`, one per agent, on the toy rollout with
 * Dr. MAS advantages; `config` replaces whole sections of that config (`trainer`, `agents`, `models`, ...).
 */
export function toyProject(name: string, config: Record<string, unknown>): TempProject {
  return new TempProject(name).write({
    'toy-rollout.js': TOY_ROLLOUT_PLUGIN,
    'drmas.config.json': {
      plugins: ['algorithms', 'backend-tfjs', 'trainer', './toy-rollout.js'],
      models: {
        left: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 3e-3 } },
        right: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 3e-3 } },
      },
      agents: { left: { model: 'left' }, right: { model: 'right' } },
      algorithm: { advantage: 'drmas' },
      ...config,
    },
  });
}
