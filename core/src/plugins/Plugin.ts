import type { RegisterContext } from '../di/RegisterContext.js';
import type { ConfigSchema, PluginConfig } from '../config/PluginConfig.js';
import type { ApplyContext } from '../kernel/ApplyContext.js';
import type { PresetConfig } from '../config/UserConfig.js';
import type { SecretEnv } from '../secrets/Secrets.js';
import type { OptionalPluginSpec } from './absentPlugins.js';

/**
 * A unit of behaviour: DI bindings in `register`, hook taps in `apply` (at least one of the two). `name` is also the
 * tap name. `S`, the type of `configSchema`, types the config both receive (`PluginConfig<S>`).
 */
export interface Plugin<O = unknown, S extends ConfigSchema = ConfigSchema> {
  name: string;
  options?: O;
  /**
   * Config sections this plugin validates: `{ algorithm: z.object({ clipRatio: z.number() }) }` adds keys to the
   * `algorithm` section; for `models` and `agents` the shape is that of one entry. A new top-level key declares a
   * section of the plugin's own.
   */
  configSchema?: S;
  /**
   * Config keys holding file paths (`env.file`; `*` matches any one key, as in `models.*.model`). Relative paths
   * there are resolved from the folder of the file that set them (`--set`: the current folder).
   */
  configPaths?: string[];
  /**
   * Environment variables the plugin reads credentials from, by what each holds: `value` (`WANDB_API_KEY`) or `url`, a
   * URL that may carry one (`MLFLOW_TRACKING_URI`). Their values are kept out of every message, as the config's
   * secret keys are (`secret()`, `secretUrl()`).
   */
  secretEnv?: SecretEnv;
  register?(ctx: RegisterContext<PluginConfig<S>>): void;
  /** Taps the kernel's hooks; gets the kernel's hooks, config and lookups (`ApplyContext`), not the whole kernel. */
  apply?(kernel: ApplyContext<PluginConfig<S>>): void;
}

export type PluginFactory<O = unknown, S extends ConfigSchema = ConfigSchema> = (options: O) => Plugin<O, S> | Promise<Plugin<O, S>>;
/** `name`, `[name, options]` or a plugin object. */
export type PluginSpec = string | [name: string, options?: unknown] | Plugin;

export interface Preset {
  name: string;
  presets?: PresetSpec[];
  plugins?: PluginSpec[];
  /** Plugins loaded where installed, after `plugins`; an absent one is an error only when the config names what it provides. */
  optionalPlugins?: OptionalPluginSpec[];
  /** Defaults; the user's config wins over them. */
  config?: PresetConfig;
}
export type PresetFactory<O = unknown> = (options: O) => Preset | Promise<Preset>;
export type PresetSpec = string | [name: string, options?: unknown] | Preset;

/** Gives a plugin object or factory its type (its config typed by its `configSchema`); returns it unchanged. */
export function definePlugin<O = unknown, S extends ConfigSchema = ConfigSchema>(
  plugin: Plugin<O, S> | PluginFactory<O, S>,
): typeof plugin {
  return plugin;
}

/** Gives a preset object or factory its type; returns it unchanged. */
export function definePreset<O = unknown>(preset: Preset | PresetFactory<O>): typeof preset {
  return preset;
}

const PHASES = ['register', 'apply'] as const;

/** The first of `register` and `apply` that `value` sets to something other than a function. */
export function nonFunctionPhase(value: unknown): (typeof PHASES)[number] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return PHASES.find((phase) => !['function', 'undefined'].includes(typeof (value as Record<string, unknown>)[phase]));
}

/** A named object with a `register` or an `apply` function (or both), neither of them set to anything else. */
export function isPlugin(value: unknown): value is Plugin {
  if (typeof value !== 'object' || value === null || typeof (value as Plugin).name !== 'string') return false;
  return nonFunctionPhase(value) === undefined && PHASES.some((phase) => typeof (value as Record<string, unknown>)[phase] === 'function');
}

export function looksLikePreset(value: unknown): value is Preset {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Preset).name === 'string' &&
    !isPlugin(value) &&
    ('plugins' in value || 'presets' in value || 'config' in value || 'optionalPlugins' in value)
  );
}
