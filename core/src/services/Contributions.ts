import { createToken, type ServiceKey, type Token } from '../di/Token.js';
import type { AbsentPlugin } from '../plugins/absentPlugins.js';

/**
 * The kernel's lookups, for services that choose a contribution by a config value (`models.<id>.backend` picks a
 * `BackendFactory` by name): inject it as `@inject(Contributions) contributions: Contributions`. Errors name the
 * plugins, the service and the config key, with suggestions.
 */
export interface Contributions {
  get<T>(key: ServiceKey<T>, request?: { key?: string; requester?: string }): T;
  /** Every binding of an open service (its contributions), in registration order. */
  getAll<T>(key: ServiceKey<T>): T[];
  /** The contribution `name` of a named service; `key` is the config key that chose it. */
  getNamed<T, Provided = T>(token: Token<T, Provided>, name: string | undefined, key?: string): T;
  namesOf(token: Token<unknown>): string[];
  /** The presets' optional plugins, not installed, that would provide a contribution of `token` (called `name`, when given). */
  absentProviders(token: Token<unknown>, name?: string): AbsentPlugin[];
}
export const Contributions = createToken<Contributions>('Contributions', { label: 'contribution lookup' });

/** @deprecated since 0.2.0: `Contributions` ("role" means an agent's role only). */
export const Roles = Contributions;
/** @deprecated since 0.2.0: `Contributions`. */
export type Roles = Contributions;
