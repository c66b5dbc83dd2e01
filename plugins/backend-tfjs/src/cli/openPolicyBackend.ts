import { DrmasError, type PolicyBackend } from '@drmas/core';
import type { ArchitectureName } from '@drmas/models';

export interface EngineOptions {
  model: string;
  seed?: number;
  architecture?: ArchitectureName;
  runtime?: string;
}

/**
 * The engine a CLI command runs on: `tfjs` here; any other name is the package `@drmas/plugin-backend-<name>`,
 * whose `createPolicyBackend(options)` opens the same checkpoint (e.g. `onnx`). tfjs is imported only for `tfjs`.
 */
export async function openPolicyBackend(engine: string, options: EngineOptions): Promise<PolicyBackend> {
  if (engine === 'tfjs') return (await import('../TfjsPolicyBackend.js')).createTfjsPolicyBackend(options);
  const packageName = `@drmas/plugin-backend-${engine}`;
  let mod: { createPolicyBackend?: (o: EngineOptions) => Promise<PolicyBackend> };
  try {
    mod = (await import(packageName)) as typeof mod;
  } catch (cause) {
    throw new DrmasError(
      'INVALID_ARGUMENT',
      `engine "${engine}" needs the package ${packageName}, which did not load: ${(cause as Error).message}`,
      {
        key: '--engine',
        cause,
        hint: `npm install ${packageName}, or use --engine tfjs`,
      },
    );
  }
  if (typeof mod.createPolicyBackend !== 'function') {
    throw new DrmasError('INVALID_ARGUMENT', `${packageName} does not export createPolicyBackend, so it cannot serve --engine ${engine}`, {
      key: '--engine',
    });
  }
  return mod.createPolicyBackend(options);
}
