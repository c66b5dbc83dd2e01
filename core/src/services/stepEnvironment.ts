import type { EnvAction, Environment, Episode, StepEnvironment, StepEpisode } from './Environment.js';

function isStepEnvironment(environment: Environment | StepEnvironment): environment is StepEnvironment {
  return !('advance' in environment) && typeof (environment as Partial<StepEnvironment>).step === 'function';
}

/**
 * An episode of a `StepEnvironment` as an `Episode`: every member is the episode's own (bound to it, so a class
 * with private fields keeps working), and `roundScore` reads its `stepScore`.
 */
function roundEpisode(episode: StepEpisode): Episode {
  return new Proxy(episode, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key === 'roundScore' ? 'stepScore' : key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    has(target, key) {
      return Reflect.has(target, key === 'roundScore' ? 'stepScore' : key);
    },
  });
}

/**
 * An environment written against the interface before 0.2.0 (`maxSteps`, `step`, `stepScore`) as an `Environment`,
 * with one warning naming it; any other environment is returned as it is. The kernel calls it once, when the
 * environment `name` is first resolved.
 */
export function adaptStepEnvironment(
  environment: Environment | StepEnvironment,
  name: string,
  warn: (message: string) => void,
): Environment {
  if (!isStepEnvironment(environment)) return environment;
  warn(
    `the environment "${name}" uses the names before 0.2.0 (maxSteps, step, stepScore), deprecated and read for one more ` +
      'release: rename them maxRounds, advance and roundScore',
  );
  const legacy = environment;
  const inner = new WeakMap<Episode, StepEpisode>();
  const adapted: Environment = {
    name: legacy.name,
    get maxRounds() {
      return legacy.maxSteps;
    },
    init: () => legacy.init(),
    batch: (cursor, count) => legacy.batch(cursor, count),
    test: () => legacy.test(),
    reset(task) {
      const episode = legacy.reset(task);
      const wrapped = roundEpisode(episode);
      inner.set(wrapped, episode);
      return wrapped;
    },
    advance: (episodes: Episode[], actions: EnvAction[]) =>
      legacy.step(
        episodes.map((e) => inner.get(e) ?? e),
        actions,
      ),
  };
  if (legacy.prepare) adapted.prepare = (cursor, count) => legacy.prepare!(cursor, count);
  return adapted;
}
