import { DrmasError } from '@drmas/core';

/**
 * Invalid inputs or options of the pure functions (`computeAdvantage`, `policyLoss`, ...). `key` names the offending
 * input field or option (e.g. `responseMask`, `options.clipRatioC`).
 */
export class AlgorithmInputError extends DrmasError {
  constructor(key: string, message: string) {
    super('INVALID_ARGUMENT', `${key}: ${message}`, { key });
  }
}
