import { inject as inversifyInject, multiInject as inversifyMultiInject, type ServiceIdentifier } from 'inversify';
import { serviceIdentifier, type ServiceKey } from './Token.js';

/** inversify's `@inject`, taking a drmas token as well: `constructor(@inject(WorkerGroups) groups: WorkerGroups)`. */
export function inject<T>(key: ServiceKey<T> | ServiceIdentifier<T>) {
  return inversifyInject(serviceIdentifier(key));
}

/** inversify's `@multiInject` for an open service: `@multiInject(MetricsSink) sinks: MetricsSink[]`. */
export function multiInject<T>(key: ServiceKey<T> | ServiceIdentifier<T>) {
  return inversifyMultiInject(serviceIdentifier(key));
}
