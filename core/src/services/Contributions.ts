import { createToken, type ServiceKey, type Token } from '../di/Token.js';
import type { AbsentPlugin } from '../plugins/absentPlugins.js';

/**
 * The kernel's lookups, for services that choose a contribution by a config value (`models.<id>.backend` picks a
 * `BackendFactory` by name): inject it as `@inject(Roles) roles: Roles`. Errors name the plugins, the role and the
 * config key, with suggestions.
 */
export interface Roles {
  get<T>(key: ServiceKey<T>, request?: { key?: string; requester?: string }): T;
  /** Every binding of an open role, in registration order. */
  getAll<T>(key: ServiceKey<T>): T[];
  /** The contribution `name` of a named role; `key` is the config key that chose it. */
  getNamed<T>(token: Token<T>, name: string | undefined, key?: string): T;
  namesOf(token: Token<unknown>): string[];
  /** The presets' optional plugins, not installed, that would provide a contribution of `token` (called `name`, when given). */
  absentProviders(token: Token<unknown>, name?: string): AbsentPlugin[];
}
export const Roles = createToken<Roles>('Roles', { label: 'role lookup' });
