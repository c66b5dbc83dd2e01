import { TokenizerError } from './errors.js';
import type { ComponentJson } from './tokenizerJson.js';

/** A string field of a tokenizer.json component, `fallback` when absent; any other type is a broken file. */
export function stringField(component: ComponentJson, key: string, fallback: string, file?: string): string {
  const value = component[key] ?? fallback;
  if (typeof value !== 'string') {
    throw new TokenizerError(`${component.type}.${key} must be a string, got ${JSON.stringify(value)}`, file);
  }
  return value;
}
