import { DrmasError } from '../errors/DrmasError.js';

/**
 * A plugin a preset uses where it is installed (an optional peer dependency of the preset's package, such as a
 * second compute engine), and what it would register: a config naming one of those while it is absent is told to
 * install it, instead of being told that nothing of that name exists.
 */
export interface OptionalPluginSpec {
  /** Its name as in `plugins` (`backend-tfjs`), resolved from the preset's folder. */
  name: string;
  /**
   * The names it registers, by the config key of their service (`BackendFactory`'s `models.<id>.backend`):
   * `{ 'models.<id>.backend': ['tfjs'] }`.
   */
  provides: Record<string, string[]>;
}

/** An optional plugin that was not installed where its preset looked for it. */
export interface AbsentPlugin {
  request: string;
  /** The package to install (the first candidate name: `backend-tfjs` -> `@drmas/plugin-backend-tfjs`). */
  packageName: string;
  /** Key path where it was listed, e.g. `presets[0] > optionalPlugins[0]`. */
  key: string;
  /** The preset that listed it (`preset math`). */
  listedIn: string;
  provides: Record<string, string[]>;
}

/** The error for `key` naming `name`, which `absent` would provide: what to install, at the key that asked for it. */
export function absentPluginError(absent: AbsentPlugin, key: string, name: string): DrmasError {
  return new DrmasError(
    'PLUGIN_NOT_FOUND',
    `${key} is "${name}", which comes with ${absent.packageName}; it is not installed (${absent.listedIn} loads it where it is)`,
    { key, hint: `npm i ${absent.packageName}` },
  );
}
