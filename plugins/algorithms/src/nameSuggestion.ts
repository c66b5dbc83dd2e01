import { didYouMean } from '@drmas/core';
import { AlgorithmInputError } from './errors.js';

/** Throws an AlgorithmInputError for an unknown name, listing the known names and core's "Did you mean" hint. */
export function unknownNameError(key: string, what: string, name: unknown, known: readonly string[]): AlgorithmInputError {
  const shown = typeof name === 'string' ? `'${name}'` : String(name);
  const hint = typeof name === 'string' ? didYouMean(name, known) : '';
  return new AlgorithmInputError(key, `unknown ${what} ${shown}; known: ${known.join(', ')}.${hint}`);
}
