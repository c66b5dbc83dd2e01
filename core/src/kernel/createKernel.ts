import { resolveConfig, type ConfigResolution, type ResolveConfigOptions } from '../config/resolveConfig.js';
import { Kernel } from './Kernel.js';

export interface KernelSetup extends ConfigResolution {
  kernel: Kernel;
}

/** Resolves the config (file, presets, plugins, overrides) and returns a kernel with every plugin applied. */
export async function createKernel(options: ResolveConfigOptions): Promise<KernelSetup> {
  const resolution = await resolveConfig(options);
  const kernel = new Kernel();
  const config = kernel.configure(resolution.config, resolution.plugins);
  return { ...resolution, config, kernel };
}
