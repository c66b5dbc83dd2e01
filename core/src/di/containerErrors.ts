import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import { describeKey, type BindingLedger } from './BindingLedger.js';
import type { ServiceKey } from './Token.js';

const PATTERN = /^(No|Ambiguous) bindings found for service: "([^"]+)"/;

/**
 * Turns inversify's "No bindings found" / "Ambiguous bindings found" into a `DrmasError` naming the plugins
 * involved and the config key to change; other errors pass through unchanged.
 */
export function translateContainerError(
  error: unknown,
  ledger: BindingLedger,
  request?: { key?: ServiceKey<unknown>; name?: string; configKey?: string; requester?: string },
): unknown {
  if (!(error instanceof Error)) return error;
  const match = PATTERN.exec(error.message);
  if (!match) return error;
  const token = ledger.tokenByDescription(match[2]!);
  const missing = token ?? (request?.key && describeKey(request.key).name === match[2] ? request.key : undefined);
  const info = missing ? describeKey(missing) : { name: match[2]!, label: match[2]!, configKey: undefined };
  const key = request?.configKey ?? info.configKey;
  const requestedFor = /Trying to resolve bindings for "([^"]+?)( \(Root service\))?"/.exec(error.message)?.[1];
  const neededBy = request?.requester ?? (requestedFor && !requestedFor.startsWith('Symbol(') ? requestedFor : undefined);
  const nameText = request?.name ? ` "${request.name}"` : '';
  if (match[1] === 'No') {
    const names = missing ? ledger.namesOf(missing) : [];
    const available = names.length ? ` Available: ${names.join(', ')}.` : '';
    return new DrmasError(
      'MISSING_BINDING',
      `no ${info.label}${nameText} is registered${neededBy ? ` (needed by ${neededBy})` : ''}.${available}`,
      {
        key,
        cause: error,
        hint:
          (request?.name ? didYouMean(request.name, names).trim() + ' ' : '') +
          `add the plugin that provides ${info.label}${nameText} to \`plugins\` (or a preset that brings it)${key ? `, or change ${key}` : ''}`,
      },
    );
  }
  const plugins = missing ? ledger.bindingsOf(missing, request?.name).map((r) => `"${r.plugin}"`) : [];
  return new DrmasError(
    'AMBIGUOUS_BINDING',
    `more than one ${info.label}${nameText} is registered${plugins.length ? `, by plugins ${[...new Set(plugins)].join(' and ')}` : ''}; the kernel cannot choose`,
    {
      key,
      cause: error,
      hint: `remove one of those plugins from the config${key ? `, or pick one by name with ${key}` : ''}`,
    },
  );
}
