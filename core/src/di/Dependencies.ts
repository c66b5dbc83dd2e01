import type { ServiceKey } from './Token.js';

/** Every binding of an open service, as a dependency: `{ sinks: allOf(MetricsSink) }` gives `sinks: MetricsSink[]`. */
export interface AllOf<T> {
  readonly allOf: ServiceKey<T>;
}

/** A single service whose absence is the config's fault: the MISSING_BINDING error names `configKey`. */
export interface ChosenBy<T> {
  readonly service: ServiceKey<T>;
  readonly configKey: string;
}

export function allOf<T>(key: ServiceKey<T>): AllOf<T> {
  return Object.freeze({ allOf: key });
}

export function chosenBy<T>(key: ServiceKey<T>, configKey: string): ChosenBy<T> {
  return Object.freeze({ service: key, configKey });
}

type Dependency<T> = ServiceKey<T> | AllOf<T> | ChosenBy<T>;

/** The services a plugin's taps use, declared once in `apply`: `kernel.inject({ engines: Engines, sinks: allOf(MetricsSink) })`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry keeps its own service type
export type Dependencies = Readonly<Record<string, Dependency<any>>>;

/** What `inject` gives for `D`: each declared service by its name, typed by its token. */
export type Injected<D extends Dependencies> = {
  readonly [K in keyof D]: D[K] extends AllOf<infer T>
    ? T[]
    : D[K] extends ChosenBy<infer T>
      ? T
      : D[K] extends ServiceKey<infer T>
        ? T
        : never;
};

/**
 * The services `dependencies` declares, each resolved the first time a tap reads it and kept from then on, so a
 * service is created when it is first used (after `configure` has settled the config it may read), once.
 */
export function injected<D extends Dependencies>(
  dependencies: D,
  resolve: (key: ServiceKey<unknown>, configKey: string | undefined) => unknown,
  resolveAll: (key: ServiceKey<unknown>) => unknown[],
): Injected<D> {
  const services = {};
  for (const [name, dependency] of Object.entries(dependencies) as [string, Dependency<unknown>][]) {
    let value: unknown;
    let resolved = false;
    Object.defineProperty(services, name, {
      enumerable: true,
      get: () => {
        if (!resolved) {
          if ('allOf' in dependency) value = resolveAll(dependency.allOf);
          else if ('configKey' in dependency && 'service' in dependency) value = resolve(dependency.service, dependency.configKey);
          else value = resolve(dependency, undefined);
          resolved = true;
        }
        return value;
      },
    });
  }
  return Object.freeze(services) as Injected<D>;
}
