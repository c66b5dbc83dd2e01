import { createToken } from '@drmas/core';
import type { CriticLearnerName } from '../config/criticConfig.js';

/**
 * A critic-based learner, as `critic.learner` names it: which critics it trains, how the policies update, and how the
 * critics' values become each turn's credit. The trainer reads these three, never a learner's name.
 */
export interface CriticLearner {
  /**
   * `group`: one critic per worker group over its rows; `role`: one per agent role over that role's own turns (its own
   * observation); `joint`: one centralized critic over the episode's joint context, shared by every agent.
   */
  readonly critics: 'group' | 'role' | 'joint';
  /** `simultaneous`: every worker group at once; `sequential`: HAPPO's roles one after another, with the M factor (`critic.happo`). */
  readonly policyUpdate: 'simultaneous' | 'sequential';
  /** `own`: each critic's values feed GAE over its turns; `vdn` / `qmix`: the role critics' values mixed into a team value (`critic.mixer`). */
  readonly credit: 'own' | 'vdn' | 'qmix';
  /** The paper or code it follows. */
  readonly follows: string;
}

export const CriticLearner = createToken<CriticLearner>('CriticLearner', {
  label: 'critic learner',
  configKey: 'critic.learner',
  named: true,
});

/** The learners the trainer provides (the algorithms README gives each one's formula). */
export const BUILTIN_CRITIC_LEARNERS: Readonly<Record<CriticLearnerName, CriticLearner>> = {
  ppo: { critics: 'group', policyUpdate: 'simultaneous', credit: 'own', follows: "PPO with GAE (Schulman et al. 2017), veRL's critic" },
  ippo: { critics: 'role', policyUpdate: 'simultaneous', credit: 'own', follows: 'IPPO (de Witt et al. 2020)' },
  mappo: { critics: 'joint', policyUpdate: 'simultaneous', credit: 'own', follows: 'MAPPO (Yu et al. 2022), as MAPoRL uses it' },
  happo: { critics: 'joint', policyUpdate: 'sequential', credit: 'own', follows: 'HAPPO (Kuba et al. 2022), as MARFT uses it' },
  vdn: { critics: 'role', policyUpdate: 'simultaneous', credit: 'vdn', follows: 'VDN (Sunehag et al. 2018)' },
  qmix: { critics: 'role', policyUpdate: 'simultaneous', credit: 'qmix', follows: "QMIX (Rashid et al. 2018), pymarl's QMixer" },
};
