// @ts-check
/**
 * drmas-plugin-bandit: a plugin written as a third party would write one (plain ESM JavaScript, its own
 * package.json, no build step). Each agent is a softmax policy over `arms` arms; an episode is one pull per agent
 * and the team is paid the mean payoff of the arms pulled. The plugin supplies the four stages of the loop:
 * rollout (sample pulls), reward (payoff on every turn), advantage (reward minus the mean of its prompt group and
 * agent, Dr. MAS style) and update (policy gradient on the softmax preferences), so `drmas train` runs end to end
 * without any ML library.
 */
import { makeTurn, SeededRng, Stage, z } from '@drmas/core';

const PLUGIN_NAME = 'bandit';

/** @typedef {{ arms: number; agents: string[]; groups: number; samplesPerGroup: number; learningRate: number; payoffs?: number[] }} BanditOptions */

/** @param {Partial<BanditOptions>} [options] @returns {import('@drmas/core').Plugin<BanditOptions>} */
export default function banditPlugin(options = {}) {
  const settings = {
    arms: options.arms ?? 4,
    agents: options.agents ?? ['proposer', 'checker'],
    groups: options.groups ?? 2,
    samplesPerGroup: options.samplesPerGroup ?? 8,
    learningRate: options.learningRate ?? 0.5,
    payoffs: options.payoffs,
  };
  /** @type {Map<string, Float64Array>} */
  const preferences = new Map();
  /** @type {number[]} */
  let payoffs = [];
  /** @type {import('@drmas/core').Rng | undefined} */
  let rng;

  /** @param {Float64Array} prefs */
  const softmax = (prefs) => {
    const max = Math.max(...prefs);
    const exps = Array.from(prefs, (p) => Math.exp(p - max));
    const sum = exps.reduce((a, b) => a + b, 0);
    return exps.map((e) => e / sum);
  };

  return {
    name: PLUGIN_NAME,
    options: settings,
    configSchema: { bandit: z.object({ payoffScale: z.number().positive().default(1) }) },
    apply(kernel) {
      kernel.hooks.setup.tap({ name: PLUGIN_NAME, stage: Stage.ENVIRONMENT }, () => {
        rng = new SeededRng(kernel.config.trainer.seed);
        const scale = /** @type {{ payoffScale: number }} */ (kernel.config.bandit).payoffScale;
        payoffs = settings.payoffs ?? Array.from({ length: settings.arms }, (_, i) => (scale * (i + 1)) / settings.arms);
        for (const agent of settings.agents) preferences.set(agent, new Float64Array(settings.arms));
      });

      kernel.hooks.beforeStep.tap(PLUGIN_NAME, (step) => {
        step.metrics['bandit/learning_rate'] = settings.learningRate;
      });

      kernel.hooks.rollout.tapPromise(PLUGIN_NAME, async (step) => {
        if (!rng) throw new Error('bandit: rollout before setup');
        const trajectories = [];
        for (let g = 0; g < settings.groups; g++) {
          const groupId = `s${step.step}-g${g}`;
          for (let n = 0; n < settings.samplesPerGroup; n++) {
            const trajectoryId = `${groupId}-t${n}`;
            const turns = settings.agents.map((agentId, index) => {
              const probs = softmax(/** @type {Float64Array} */ (preferences.get(agentId)));
              let u = /** @type {import('@drmas/core').Rng} */ (rng).next();
              let arm = 0;
              while (arm < probs.length - 1 && u >= probs[arm]) u -= probs[arm++];
              return makeTurn({
                groupId,
                trajectoryId,
                agentId,
                round: 0,
                workerGroupId: agentId,
                index,
                promptIds: [],
                responseIds: [arm],
                logProbs: [Math.log(probs[arm])],
                valid: true,
                action: { arm },
              });
            });
            trajectories.push({ groupId, trajectoryId, taskId: `g${g}`, turns, done: true });
          }
        }
        return { trajectories, metrics: {} };
      });

      kernel.hooks.reward.tap(PLUGIN_NAME, (batch, step) => {
        let total = 0;
        for (const trajectory of batch.trajectories) {
          const outcome = trajectory.turns.reduce((sum, turn) => sum + payoffs[turn.responseIds[0]], 0) / trajectory.turns.length;
          trajectory.outcome = outcome;
          for (const turn of trajectory.turns) turn.reward = outcome;
          total += outcome;
        }
        step.metrics['outcome/mean'] = total / batch.trajectories.length;
        return batch;
      });

      // The batch is columnar: one row per turn, ids integer-coded. Advantage = reward minus the mean of its
      // (prompt group, agent) pool, written on the row's one token.
      kernel.hooks.advantage.tap(PLUGIN_NAME, (batch) => {
        const { group, agent } = batch.ids;
        /** @type {Map<number, { sum: number; count: number }>} */
        const pools = new Map();
        const keyOf = (/** @type {number} */ row) => group.codes[row] * agent.names.length + agent.codes[row];
        for (let row = 0; row < batch.rows; row++) {
          const pool = pools.get(keyOf(row)) ?? { sum: 0, count: 0 };
          pool.sum += batch.rewards[row];
          pool.count += 1;
          pools.set(keyOf(row), pool);
        }
        for (let row = 0; row < batch.rows; row++) {
          const pool = /** @type {{ sum: number; count: number }} */ (pools.get(keyOf(row)));
          batch.advantages[row * batch.responseLength] = batch.rewards[row] - pool.sum / pool.count;
        }
      });

      // Each worker group gets a view: row indices into the step's batch.
      kernel.hooks.update.tap(PLUGIN_NAME, (view, step) => {
        const { batch, rows } = view;
        const prefs = /** @type {Float64Array} */ (preferences.get(view.workerGroupId));
        const probs = softmax(prefs);
        const gradient = new Float64Array(settings.arms);
        for (const row of rows) {
          const arm = batch.responseIds[row * batch.responseLength];
          const advantage = batch.advantages[row * batch.responseLength];
          for (let a = 0; a < settings.arms; a++) gradient[a] += (advantage * ((a === arm ? 1 : 0) - probs[a])) / rows.length;
        }
        let norm = 0;
        for (let a = 0; a < settings.arms; a++) {
          prefs[a] += settings.learningRate * gradient[a];
          norm += gradient[a] ** 2;
        }
        step.metrics[`actor/${view.workerGroupId}/grad_norm`] = Math.sqrt(norm);
      });

      kernel.hooks.afterStep.tap(PLUGIN_NAME, (result) => {
        for (const [agent, prefs] of preferences) {
          const probs = softmax(prefs);
          result.metrics[`bandit/${agent}/p_best_arm`] = probs[probs.length - 1];
        }
      });
    },
  };
}
