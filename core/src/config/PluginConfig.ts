import type { z, ZodObject } from 'zod';
import type { AgentSettings, ModelSettings, ResolvedConfig } from './ResolvedConfig.js';

/**
 * The config sections a plugin declares: a section's name and the zod object of the keys the plugin adds to it (for
 * `models` and `agents`, the keys of one entry). The kernel validates the config against every plugin's.
 */
export type ConfigSchema = Record<string, ZodObject>;

/** One section of the resolved config with a plugin's keys typed: the kernel's own keys, then those of `S`. */
type SectionConfig<K extends string, S extends ZodObject> = K extends 'models'
  ? Record<string, ModelSettings & z.output<S>>
  : K extends 'agents'
    ? Record<string, AgentSettings & z.output<S>>
    : (K extends keyof ResolvedConfig ? ResolvedConfig[K] : unknown) & z.output<S>;

/**
 * The resolved config as a plugin with `configSchema` S reads it: every section S declares typed from S's zod objects
 * (`PluginConfig<typeof schema>['trainer']['roleSwap']`), the rest as `ResolvedConfig` has it. It is what the kernel
 * validated against S, so no read of it needs a cast; `RegisterContext` and `ApplyContext` hand it to the plugin.
 */
export type PluginConfig<S extends ConfigSchema = ConfigSchema> = string extends keyof S
  ? ResolvedConfig
  : ResolvedConfig & { [K in keyof S & string]: SectionConfig<K, S[K]> };
