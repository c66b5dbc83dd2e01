import type { AgentRegistry } from '../agents/AgentRegistry.js';
import type { Dependencies, Injected } from '../di/Dependencies.js';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { Contributions } from '../services/Contributions.js';
import type { HookName, KernelHooks } from './KernelHooks.js';
import type { TapRecord } from './TapLedger.js';

/**
 * What a plugin's `apply` gets of the kernel: its hooks to tap, the resolved config (typed by the plugin's schema:
 * `ApplyContext<PluginConfig<typeof schema>>`), the services its taps use (`inject`), the lookups of contributions a
 * config value chooses (`getNamed`, `namesOf`, `absentProviders`; `get`, `getAll` for a service that may be absent), the
 * agent classes to create agents from, the taps recorded so far, and where the config came from. Driving the kernel (`run`, `setup`,
 * `step`), its container and its ledger stay with the code that made it; reading one of those in `apply` is a
 * PLUGIN_INVALID error saying what to use instead.
 */
export interface ApplyContext<C extends ResolvedConfig = ResolvedConfig> extends Contributions {
  readonly hooks: KernelHooks;
  readonly config: C;
  /**
   * The services the plugin's taps use, declared once: `const { engines, sinks } = kernel.inject({ engines: Engines,
   * sinks: allOf(MetricsSink) })`. The container resolves each the first time a tap reads it (the config settled by
   * then), once; a service nobody bound is MISSING_BINDING naming this plugin as the one that needs it.
   */
  inject<D extends Dependencies>(dependencies: D): Injected<D>;
  /** The agent classes plugins registered: `agents.create('planner')` makes one (register them in `register(ctx)`). */
  readonly agents: Pick<AgentRegistry, 'create' | 'has' | 'names' | 'origin' | 'resolve'>;
  /** The taps of `hook` in the order it calls them (name, type, stage), as the kernel recorded them. */
  tapsOf(hook: HookName): TapRecord[];
  /** The config layer that set a key: a file path, `preset <name>`, `--set <text>`; undefined when none did. */
  originOf(key: string): string | undefined;
  /** The folder relative paths and the default run directory resolve from. */
  readonly cwd: string;
  /** The config file the kernel was made from (undefined for an inline config). */
  readonly configFile: string | undefined;
}
