import type { Newable, ServiceIdentifier } from 'inversify';

/**
 * A DI token: the identifier a service is bound under, with what messages need to name it. Declared once as a constant
 * beside its interface, under the same name (`export const AdvantageEstimator = createToken<AdvantageEstimator>(...)`).
 */
export interface Token<T, Provided = T> {
  /** The identifier inversify binds. `Symbol.for`, so two copies of core loaded in one process share their tokens. */
  readonly id: symbol;
  /** The interface name, e.g. `AdvantageEstimator`. */
  readonly name: string;
  /** How a person calls one, e.g. `advantage estimator`. */
  readonly label: string;
  /** The config key that picks among named bindings, e.g. `algorithm.advantage`. */
  readonly configKey?: string;
  /** Named services are chosen by name from config and listed by `drmas info`. */
  readonly named: boolean;
  /**
   * Turns what a plugin provides into the service, once, when the contribution `name` is first resolved (an older
   * interface still accepted for a release); `warn` tells the user what to change.
   */
  adapt?(this: void, value: Provided, name: string, warn: (message: string) => void): T;
  /** Carries `T` for type inference only. */
  readonly __type?: T;
}

export function createToken<T, Provided = T>(
  name: string,
  info: {
    label: string;
    configKey?: string;
    named?: boolean;
    adapt?: (value: Provided, name: string, warn: (message: string) => void) => T;
  },
): Token<T, Provided> {
  return Object.freeze({
    id: Symbol.for(`drmas:${name}`),
    name,
    label: info.label,
    configKey: info.configKey,
    named: info.named ?? false,
    adapt: info.adapt,
  });
}

/** What can be asked of the container: a token, or a class bound to itself. */
export type ServiceKey<T> = Token<T> | Newable<T>;

export function isToken(value: unknown): value is Token<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Token<unknown>).id === 'symbol' &&
    typeof (value as Token<unknown>).label === 'string'
  );
}

/** The identifier inversify knows a key by. */
export function serviceIdentifier<T>(key: ServiceKey<T> | ServiceIdentifier<T>): ServiceIdentifier<T> {
  return isToken(key) ? key.id : key;
}
