import { drmas } from './drmas.js';
import { gae } from './gae.js';
import { gigpo } from './gigpo.js';
import { gpg } from './gpg.js';
import { grpo } from './grpo.js';
import { grpoPassk } from './grpoPassk.js';
import { magrpo, maremax, marloo } from './jointAction.js';
import { opo } from './opo.js';
import { rae } from './rae.js';
import { reinforcePlusPlus } from './reinforcePlusPlus.js';
import { reinforcePlusPlusBaseline } from './reinforcePlusPlusBaseline.js';
import { remax } from './remax.js';
import { rloo } from './rloo.js';
import type { EstimatorDefinition } from './types.js';

/**
 * The estimators this package defines, by name. The kernel's container is where config names are looked up: the
 * algorithms plugin provides each of these there as an `AdvantageEstimator`.
 */
export const ADVANTAGE_ESTIMATORS = Object.freeze({
  grpo,
  drmas,
  grpo_passk: grpoPassk,
  rloo,
  opo,
  gpg,
  reinforce_plus_plus: reinforcePlusPlus,
  reinforce_plus_plus_baseline: reinforcePlusPlusBaseline,
  remax,
  gae,
  gigpo,
  magrpo,
  marloo,
  maremax,
  rae,
}) satisfies Readonly<Record<string, EstimatorDefinition>>;

export type BuiltinEstimatorName = keyof typeof ADVANTAGE_ESTIMATORS;
