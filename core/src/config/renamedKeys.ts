import { DrmasError } from '../errors/DrmasError.js';
import { isPlainObject, type ConfigObject } from './ConfigLayers.js';

/** A config key renamed in a release: still read under its old name, with a warning, until the next one. */
export interface RenamedKey {
  old: string;
  now: string;
  since: string;
}

/** Every renamed key, old name first. */
export const RENAMED_KEYS: readonly RenamedKey[] = Object.freeze([{ old: 'env.maxSteps', now: 'env.maxRounds', since: '0.2.0' }]);

function sameSection(renamed: RenamedKey): string[] {
  const old = renamed.old.split('.');
  const now = renamed.now.split('.');
  if (old.length !== now.length || old.slice(0, -1).join('.') !== now.slice(0, -1).join('.')) {
    throw new Error(`RENAMED_KEYS: ${renamed.old} and ${renamed.now} must be keys of one section`);
  }
  return old.slice(0, -1);
}

export function renamedKeyWarning(renamed: RenamedKey, source: string): string {
  return `${source}: ${renamed.old} is deprecated since ${renamed.since} and read as ${renamed.now}; write ${renamed.now} instead`;
}

function bothSetError(renamed: RenamedKey, source: string): DrmasError {
  return new DrmasError(
    'CONFIG_INVALID',
    `${renamed.old} and ${renamed.now} are both set; ${renamed.old} is the old name of ${renamed.now}`,
    {
      key: renamed.old,
      file: source,
      hint: `keep ${renamed.now} and remove ${renamed.old}`,
    },
  );
}

/**
 * One config layer (a preset's defaults, a config file) with its renamed keys under their new names, copying only the
 * objects on the way; `warn` is told once per key moved. Both names set in the layer is CONFIG_INVALID.
 */
export function renameKeysInLayer(layer: ConfigObject, source: string, warn: (message: string) => void): ConfigObject {
  let result = layer;
  for (const renamed of RENAMED_KEYS) {
    const section = sameSection(renamed);
    const oldKey = renamed.old.split('.').at(-1)!;
    const newKey = renamed.now.split('.').at(-1)!;
    let node: unknown = result;
    for (const part of section) node = isPlainObject(node) ? node[part] : undefined;
    if (!isPlainObject(node) || !(oldKey in node)) continue;
    if (newKey in node) throw bothSetError(renamed, source);
    warn(renamedKeyWarning(renamed, source));
    const { [oldKey]: value, ...rest } = node;
    result = replaceAt(result, section, { ...rest, [newKey]: value });
  }
  return result;
}

function replaceAt(root: ConfigObject, path: readonly string[], value: ConfigObject): ConfigObject {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  return { ...root, [head]: replaceAt(root[head] as ConfigObject, rest, value) };
}

/**
 * The `--set` key paths with renamed keys under their new names; `warn` is told once per key, naming the `--set`
 * text (`sourceOf`). Both names among the overrides is CONFIG_OVERRIDE_INVALID.
 */
export function renameKeysInOverrides<O extends { path: [string, ...string[]] }>(
  overrides: readonly O[],
  sourceOf: (override: O) => string,
  warn: (message: string) => void,
): O[] {
  const renamedOf = (o: O) => RENAMED_KEYS.find((r) => r.old === o.path.join('.'));
  for (const renamed of RENAMED_KEYS) {
    const old = overrides.find((o) => o.path.join('.') === renamed.old);
    if (!old) continue;
    if (overrides.some((o) => o.path.join('.') === renamed.now)) {
      const error = bothSetError(renamed, sourceOf(old));
      throw new DrmasError('CONFIG_OVERRIDE_INVALID', error.message, { key: error.key, file: error.file, hint: error.hint });
    }
    warn(renamedKeyWarning(renamed, sourceOf(old)));
  }
  return overrides.map((o) => {
    const renamed = renamedOf(o);
    return renamed ? { ...o, path: renamed.now.split('.') as [string, ...string[]] } : o;
  });
}
