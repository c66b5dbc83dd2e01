import type { BindToFluentSyntax, Container } from 'inversify';
import type { AgentConstructor } from '../agents/agent.js';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { Token } from './Token.js';

/** What a plugin's `register` receives: bindings made through it are recorded under the plugin's name. */
export interface RegisterContext {
  /** The registering plugin. */
  readonly plugin: string;
  readonly config: ResolvedConfig;
  /** The kernel's container, for lookups; bind through `bind`/`provide` so errors can name the plugin. */
  readonly container: Container;
  /** Binds a single role (one binding expected) or adds to an open role (read with getAll). */
  bind<T>(token: Token<T>): BindToFluentSyntax<T>;
  /** Adds a named contribution to a role (`provide(AdvantageEstimator, 'drmas', estimator)`); names are unique. */
  provide<T>(token: Token<T>, name: string, value: T): void;
  readonly agents: {
    /** Registers an `@agent('name')`-decorated class, or a class under an explicit name. */
    register(target: AgentConstructor): void;
    register(name: string, target: AgentConstructor): void;
  };
}
