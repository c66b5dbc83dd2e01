import { closestMatches } from '../errors/didYouMean.js';
import { DrmasError } from '../errors/DrmasError.js';
import type { ParamGroupSettings } from './PolicyBackend.js';

/** A param group whose patterns name no parameter of the model. */
export class ParamGroupError extends DrmasError {
  constructor(
    /** Index of the group in `paramGroups`. */
    readonly group: number,
    message: string,
  ) {
    super('CONFIG_INVALID', message, {
      hint: 'name parameters as the checkpoint does (model.norm.weight, model.layers.0.mlp.up_proj.weight); * matches any run of characters',
    });
  }
}

function patternToRegExp(pattern: string): RegExp {
  const literal = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`);
}

/**
 * The group index of each parameter name: the first group with a pattern that matches it, -1 for none. Every
 * pattern must match some parameter, so a misspelt name is an error rather than a silently ignored group.
 */
export function assignParamGroups(names: readonly string[], groups: readonly ParamGroupSettings[] = []): Map<string, number> {
  const assigned = new Map(names.map((name) => [name, -1]));
  groups.forEach((group, index) => {
    for (const pattern of group.params) {
      const re = patternToRegExp(pattern);
      const matched = names.filter((name) => re.test(name));
      if (matched.length === 0) {
        const near = closestMatches(pattern, names, 3);
        throw new ParamGroupError(
          index,
          `parameter pattern "${pattern}" matches no parameter of the model` +
            (near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(', ')}?` : `; names look like "${names[0]}"`),
        );
      }
      for (const name of matched) if (assigned.get(name) === -1) assigned.set(name, index);
    }
  });
  return assigned;
}
