import { resolveConfig, type ConfigResolution, type ResolveConfigOptions } from '../config/resolveConfig.js';
import { DrmasError } from '../errors/DrmasError.js';
import { Kernel } from './Kernel.js';

export interface KernelSetup extends ConfigResolution {
  kernel: Kernel;
}

/**
 * Resolves the config (file, presets, plugins, overrides) and returns a kernel with the built-in plugins and every
 * configured one applied: `kernel.run()` then trains and writes the run directory `drmas train` writes.
 */
export async function createKernel(options: ResolveConfigOptions): Promise<KernelSetup> {
  const resolution = await resolveConfig(options);
  const kernel = new Kernel({
    cwd: options.cwd,
    configFile: resolution.file,
    locate: resolution.locate,
    originOf: resolution.originOf,
    absentPlugins: resolution.absentPlugins,
    schema: resolution.schema,
    warn: options.warn,
  });
  let config;
  try {
    config = kernel.configure(resolution.config, resolution.plugins);
  } catch (error) {
    // A config key the `validate` hook rejects is fixed where it was set: the user's file, or a `--set`.
    const file = DrmasError.is(error) && error.key && !error.file ? kernel.locate(error.key) : undefined;
    if (DrmasError.is(error) && file) {
      throw new DrmasError(error.code, error.message, { key: error.key, file, hint: error.hint, cause: error });
    }
    throw error;
  }
  return { ...resolution, config, kernel };
}
