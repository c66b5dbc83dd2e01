import type { BindToFluentSyntax } from 'inversify';
import type { AgentConstructor } from '../agents/agent.js';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { ServiceKey, Token } from './Token.js';

/**
 * What a plugin's `register` receives: the load options of the plugin's own inversify `ContainerModule`, with every
 * binding recorded under the plugin's name (for messages and `drmas info`).
 */
export interface RegisterContext<C extends ResolvedConfig = ResolvedConfig> {
  /** The registering plugin. */
  readonly plugin: string;
  /** The run's config (as the `configure` hook leaves it, when read after it), typed by the plugin's schema. */
  readonly config: C;
  /**
   * Binds a single service (one binding expected), adds to an open service (read with `getAll` / `@multiInject`), or binds a
   * class of the plugin's own (`ctx.bind(WorkerGroupsService).toSelf().inSingletonScope()`).
   */
  bind<T>(key: ServiceKey<T>): BindToFluentSyntax<T>;
  /**
   * Adds a named contribution to a service (`provide(AdvantageEstimator, 'drmas', estimator)`); names are unique. A
   * token with `adapt` also takes the older form it adapts.
   */
  provide<T, Provided = T>(token: Token<T, Provided>, name: string, value: T | Provided): void;
  isBound(key: ServiceKey<unknown>): boolean;
  readonly agents: {
    /** Registers an `@agent('name')`-decorated class, or a class under an explicit name. */
    register(target: AgentConstructor): void;
    register(name: string, target: AgentConstructor): void;
  };
}
