import { unknownNameError } from '../nameSuggestion.js';
import { dapo } from './dapo.js';
import { drmas } from './drmas.js';
import { gae } from './gae.js';
import { gigpo } from './gigpo.js';
import { gpg } from './gpg.js';
import { grpo } from './grpo.js';
import { grpoPassk } from './grpoPassk.js';
import { opo } from './opo.js';
import { reinforcePlusPlus } from './reinforcePlusPlus.js';
import { reinforcePlusPlusBaseline } from './reinforcePlusPlusBaseline.js';
import { remax } from './remax.js';
import { rloo } from './rloo.js';
import type { AdvantageEstimator } from './types.js';

const BUILT_IN: readonly AdvantageEstimator[] = [
  grpo,
  drmas,
  grpoPassk,
  rloo,
  opo,
  gpg,
  reinforcePlusPlus,
  reinforcePlusPlusBaseline,
  remax,
  gae,
  gigpo,
  dapo,
];

const estimators: ReadonlyMap<string, AdvantageEstimator> = new Map<string, AdvantageEstimator>(BUILT_IN.map((e) => [e.name, e]));

/** Names of the registered advantage estimators. */
export function advantageEstimatorNames(): string[] {
  return [...estimators.keys()];
}

/** The estimator registered under `name`; throws with the known names and a "Did you mean" hint otherwise. */
export function getAdvantageEstimator(name: string): AdvantageEstimator {
  const estimator = typeof name === 'string' ? estimators.get(name) : undefined;
  if (estimator === undefined) throw unknownNameError('estimator', 'advantage estimator', name, advantageEstimatorNames());
  return estimator;
}
