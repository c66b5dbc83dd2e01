import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import { DrmasError } from '../errors/DrmasError.js';
import type { ApplyContext } from '../kernel/ApplyContext.js';
import type { Plugin } from '../plugins/Plugin.js';
import { BATCH_INPUT_HINTS, BATCH_INPUTS, BatchInputSource, type BatchInput } from '../services/BatchInputSource.js';
import { AdvantageEstimator, type AdvantageScope } from '../services/AdvantageEstimator.js';

/** The tap name of the built-in advantage plugin. */
export const ADVANTAGE_PLUGIN_NAME = 'drmas:advantage';
const PLUGIN_NAME = ADVANTAGE_PLUGIN_NAME;
const KEY = 'algorithm.advantage';

/** One estimator and the config key that chose it; `agents` are the roles that chose it (none for `algorithm.advantage`). */
interface EstimatorChoice {
  name: string;
  key: string;
  agents: string[];
}

/** The estimator each role's rows go to: `agents.<role>.advantage`, else `algorithm.advantage`. */
function estimatorChoices(config: ResolvedConfig): { fallback?: EstimatorChoice; byName: Map<string, EstimatorChoice> } {
  const byName = new Map<string, EstimatorChoice>();
  const fallbackName = config.algorithm.advantage;
  const fallback = fallbackName ? { name: fallbackName, key: KEY, agents: [] } : undefined;
  if (fallback) byName.set(fallback.name, fallback);
  for (const [role, entry] of Object.entries(config.agents)) {
    const name = typeof entry.advantage === 'string' ? entry.advantage : undefined;
    if (name === undefined) continue;
    const choice = byName.get(name) ?? { name, key: `agents.${role}.advantage`, agents: [] };
    choice.agents.push(role);
    byName.set(name, choice);
  }
  return { fallback, byName };
}

/** Each chosen estimator's rows: a role's rows go to its own estimator, the other rows to `algorithm.advantage`. */
function scopes(batch: TrainingBatch, config: ResolvedConfig): Map<string, AdvantageScope> {
  const { fallback, byName } = estimatorChoices(config);
  const chosen = new Map<string, string>();
  for (const choice of byName.values()) for (const role of choice.agents) chosen.set(role, choice.name);
  const agentNames = batch.ids.agent.names;
  const nameOfCode = agentNames.map((role) => chosen.get(role) ?? fallback?.name);
  const rows = new Map<string, number[]>();
  const agents = new Map<string, Set<string>>();
  for (let r = 0; r < batch.rows; r++) {
    const code = batch.ids.agent.codes[r]!;
    const name = nameOfCode[code];
    if (name === undefined) continue;
    if (!rows.has(name)) {
      rows.set(name, []);
      agents.set(name, new Set());
    }
    rows.get(name)!.push(r);
    agents.get(name)!.add(agentNames[code]!);
  }
  return new Map([...rows].map(([name, list]) => [name, { rows: Int32Array.from(list), agents: [...agents.get(name)!].sort() }]));
}

/**
 * Taps the `advantage` hook with the estimator named by `algorithm.advantage`, and with each estimator a role names
 * in `agents.<role>.advantage` on that role's rows alone: the sources of the inputs they need fill their columns
 * once, then each estimator fills its rows' advantages. With no role estimator, the one estimator sees the whole
 * batch. `validate` checks that every named estimator exists and that a plugin supplies every input it needs. Does
 * nothing when no estimator is configured.
 */
export class AdvantagePlugin implements Plugin {
  readonly name = PLUGIN_NAME;

  apply(kernel: ApplyContext): void {
    const estimatorOf = (choice: EstimatorChoice) => kernel.getNamed(AdvantageEstimator, choice.name, choice.key);
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      const supplied = kernel.namesOf(BatchInputSource);
      for (const choice of estimatorChoices(config).byName.values()) {
        const estimator = estimatorOf(choice);
        for (const input of estimator.inputs ?? []) {
          if (supplied.includes(input)) continue;
          throw new DrmasError(
            'CONFIG_INVALID',
            `advantage estimator "${estimator.name}" needs ${input}: ${BATCH_INPUTS[input]}; no plugin in this config supplies it`,
            {
              key: choice.key,
              hint:
                (BATCH_INPUT_HINTS[input] ? `${BATCH_INPUT_HINTS[input]}; or ` : '') +
                `choose an estimator that works from rewards alone (drmas, grpo, rloo, ...), or add a plugin that provides the batch input "${input}"`,
            },
          );
        }
      }
    });
    kernel.hooks.advantage.tapPromise(PLUGIN_NAME, async (batch, step) => {
      const { byName } = estimatorChoices(kernel.config);
      if (byName.size === 0) return;
      const filled = new Set<BatchInput>();
      const run = async (choice: EstimatorChoice, scope?: AdvantageScope) => {
        const estimator = estimatorOf(choice);
        for (const input of estimator.inputs ?? []) {
          if (filled.has(input)) continue;
          filled.add(input);
          await kernel.getNamed(BatchInputSource, input, choice.key).fill(batch, step);
        }
        await estimator.estimate(batch, step, scope);
      };
      const [only] = byName.values();
      if (byName.size === 1 && only!.agents.length === 0) return run(only!);
      for (const [name, scope] of scopes(batch, kernel.config)) await run(byName.get(name)!, scope);
    });
  }
}
