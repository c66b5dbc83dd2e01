import { createKernel, DrmasError, Environment, type Kernel } from '@drmas/core';
import type { ServedEnvironment } from './EnvironmentServer.js';

export interface ServedEnvironmentsRequest {
  cwd: string;
  /** Environment names (`math`, `code`), or plugin names and paths of plugins that provide one of that name. */
  names: readonly string[];
  /** A training config whose plugins and `env` settings serve the environments it provides (`--config`). */
  configPath?: string;
  /** `--set` texts: applied to the config when one is given, else to the served plugins' own config. */
  overrides?: string[];
}

export interface ServedEnvironments {
  environments: Map<string, ServedEnvironment>;
  /** The kernels the environments live in, for their `shutdown` hooks. */
  kernels: Kernel[];
}

/** `math` -> `env-math` (then `@drmas/plugin-env-math`, `drmas-plugin-env-math`); plugin names and paths as given. */
function pluginOf(name: string): string {
  return name.startsWith('env-') || name.includes('/') || name.startsWith('.') ? name : `env-${name}`;
}

/** The environment's name: the plugin's without `env-` (`drmas-plugin-env-lists` -> `lists`, `./env-x.js` -> `x`). */
function environmentOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1).replace(/\.[cm]?[jt]s$/, '');
  return base.replace(/^(drmas-plugin-|plugin-)?env-/, '');
}

/** A missing plugin is reported as the environment the user named, with the installed environments to choose from. */
function unknownEnvironment(error: unknown, name: string): unknown {
  if (!DrmasError.is(error) || error.code !== 'PLUGIN_NOT_FOUND') return error;
  return new DrmasError('PLUGIN_NOT_FOUND', `unknown environment "${name}": no plugin ${pluginOf(name)} is installed`, {
    key: '--environments',
    cause: error,
    hint: (error.hint ?? '').replace(/"env-([^"]+)"/g, '"$1"') || `install the plugin that provides "${name}"`,
  });
}

/**
 * The environments `drmas serve` hosts, each initialized: those the config provides (`--config`, with its `env`
 * settings, so a server serves exactly the tasks a local run of that config trains on), the others from their plugins
 * (`math` -> plugin `env-math`) with default settings and `--set`.
 */
export async function loadServedEnvironments(request: ServedEnvironmentsRequest): Promise<ServedEnvironments> {
  const kernels: Kernel[] = [];
  const environments = new Map<string, ServedEnvironment>();
  const wanted = request.names.map((name) => ({ name, environment: environmentOf(name) }));
  let remaining = wanted;
  if (request.configPath !== undefined) {
    const { kernel } = await createKernel({ cwd: request.cwd, configPath: request.configPath, overrides: request.overrides });
    kernels.push(kernel);
    const provided = new Set(kernel.namesOf(Environment));
    for (const w of wanted.filter((w) => provided.has(w.environment))) {
      environments.set(w.environment, {
        environment: kernel.getNamed(Environment, w.environment, '--environments'),
        plugin: pluginOfBinding(kernel, w.environment),
      });
    }
    remaining = wanted.filter((w) => !provided.has(w.environment));
  }
  if (remaining.length > 0) {
    const plugins = remaining.map((w) => pluginOf(w.name));
    let kernel: Kernel;
    try {
      ({ kernel } = await createKernel({
        cwd: request.cwd,
        inline: { plugins },
        overrides: request.configPath === undefined ? request.overrides : undefined,
      }));
    } catch (error) {
      const missing =
        DrmasError.is(error) && error.code === 'PLUGIN_NOT_FOUND'
          ? remaining.find((w) => error.message.includes(`"${pluginOf(w.name)}"`))
          : undefined;
      throw missing ? unknownEnvironment(error, missing.name) : error;
    }
    kernels.push(kernel);
    for (const w of remaining) {
      environments.set(w.environment, {
        environment: kernel.getNamed(Environment, w.environment, '--environments'),
        plugin: pluginOfBinding(kernel, w.environment),
      });
    }
  }
  // In --environments order, each loaded (datasets read, indexes built) before the first call.
  const ordered = new Map(wanted.map((w) => [w.environment, environments.get(w.environment)!]));
  for (const { environment } of ordered.values()) await environment.init();
  return { environments: ordered, kernels };
}

function pluginOfBinding(kernel: Kernel, name: string): string {
  return kernel.ledger.bindingsOf(Environment, name)[0]?.plugin ?? '?';
}
