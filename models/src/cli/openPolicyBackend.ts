import { DrmasError, type PolicyBackend } from '@drmas/core';
import type { ArchitectureName } from '../config/ModelConfig.js';

export interface EngineOptions {
  model: string;
  seed?: number;
  architecture?: ArchitectureName;
  runtime?: string;
}

type EngineModule = { createPolicyBackend?: (o: EngineOptions) => Promise<PolicyBackend> };

/** What `--engine` defaults to: the first of these whose package is installed (tfjs is an optional peer of the presets). */
const DEFAULT_ENGINES = ['tfjs', 'onnx'];

function enginePackage(engine: string): string {
  return `@drmas/plugin-backend-${engine}`;
}

/** Whether `cause` is the failure to find `packageName` itself (not a module it imports). */
function isMissing(cause: unknown, packageName: string): boolean {
  const error = cause as { code?: string; message?: string };
  return error.code === 'ERR_MODULE_NOT_FOUND' && (error.message ?? '').includes(`'${packageName}'`);
}

async function importEngine(engine: string): Promise<EngineModule> {
  const packageName = enginePackage(engine);
  try {
    return (await import(packageName)) as EngineModule;
  } catch (cause) {
    const missing = isMissing(cause, packageName);
    throw new DrmasError(
      'INVALID_ARGUMENT',
      missing
        ? `engine "${engine}" needs the package ${packageName}, which is not installed`
        : `engine "${engine}" needs the package ${packageName}, which did not load: ${(cause as Error).message}`,
      { key: '--engine', cause, hint: `npm i ${packageName}, or name another engine with --engine` },
    );
  }
}

/** The engine `--engine` names, else the first of `DEFAULT_ENGINES` installed. */
async function engineModule(engine: string | undefined): Promise<{ name: string; mod: EngineModule }> {
  if (engine !== undefined) return { name: engine, mod: await importEngine(engine) };
  for (const name of DEFAULT_ENGINES) {
    try {
      return { name, mod: (await import(enginePackage(name))) as EngineModule };
    } catch (cause) {
      if (!isMissing(cause, enginePackage(name))) return { name, mod: await importEngine(name) };
    }
  }
  throw new DrmasError('INVALID_ARGUMENT', `no engine package is installed (tried ${DEFAULT_ENGINES.map(enginePackage).join(', ')})`, {
    key: '--engine',
    hint: `npm i ${enginePackage('onnx')}`,
  });
}

/**
 * The engine a CLI command runs on: the package `@drmas/plugin-backend-<engine>`, whose `createPolicyBackend(options)`
 * opens the checkpoint (`tfjs`, `onnx`); without `engine`, tfjs where installed, else onnx. The commands live here,
 * beside the checkpoints they open, so that they work with whichever engine a project installed.
 */
export async function openPolicyBackend(engine: string | undefined, options: EngineOptions): Promise<PolicyBackend> {
  const { name, mod } = await engineModule(engine);
  if (typeof mod.createPolicyBackend !== 'function') {
    throw new DrmasError(
      'INVALID_ARGUMENT',
      `${enginePackage(name)} does not export createPolicyBackend, so it cannot serve --engine ${name}`,
      {
        key: '--engine',
      },
    );
  }
  return mod.createPolicyBackend(options);
}
