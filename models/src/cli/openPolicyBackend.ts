import { createKernel, DrmasError, Engines, type EngineCapability, type PolicyBackend } from '@drmas/core';
import type { ArchitectureName } from '../config/ModelConfig.js';
import { LOCAL_ENGINES } from './localEngines.js';

export interface EngineOptions {
  model: string;
  seed?: number;
  architecture?: ArchitectureName;
  runtime?: string;
  /** Where the engine plugins are looked up (a project's folder); default: the process's. */
  cwd?: string;
  /** Where the choice's skipped engines and the engine's warnings go; default: standard error. */
  log?: (message: string) => void;
}

/** The model id the command's model has in its kernel's config: errors at `models.cli.<key>` are the flags' own. */
const MODEL_ID = 'cli';
const FLAGS: Readonly<Record<string, string>> = { model: '--model', runtime: '--runtime', architecture: '--architecture', seed: '--seed' };

function logToStderr(message: string): void {
  process.stderr.write(`drmas: ${message}\n`);
}

/**
 * An error about the command's model at the flag that set it. Engines and plugins locate what they throw at the
 * model's config key (wrapping the error that named a file, or adding the place the key was set); the flag replaces
 * that key, and the innermost error, which says what is wrong, is shown.
 */
function atFlag(error: unknown): unknown {
  const prefix = `models.${MODEL_ID}.`;
  if (!DrmasError.is(error) || !error.key?.startsWith(prefix)) return error;
  const flag = FLAGS[error.key.slice(prefix.length)];
  if (flag === undefined) return error;
  let own: DrmasError = error;
  while (own.key?.startsWith(prefix) && DrmasError.is(own.cause)) own = own.cause;
  return own.key?.startsWith(prefix) ? new DrmasError(own.code, own.message, { key: flag, hint: own.hint, cause: error }) : own.at(flag);
}

/**
 * The engine a CLI command runs on, chosen by the engine service among drmas's own engines (`LOCAL_ENGINES`, each where
 * installed) as training chooses: `engine` by name, or without it (or `auto`) the best available one that does what
 * `needs` asks (onnx where onnxruntime-node loads, else tfjs); engines it passed over are logged with the reason. The
 * commands live here, beside the checkpoints they open, so that they work with whichever engine a project installed.
 */
export async function openPolicyBackend(
  engine: string | undefined,
  options: EngineOptions,
  needs: readonly EngineCapability[] = ['sample'],
): Promise<PolicyBackend> {
  const log = options.log ?? logToStderr;
  const model = Object.fromEntries(
    Object.entries({ model: options.model, seed: options.seed, architecture: options.architecture, runtime: options.runtime }).filter(
      ([, value]) => value !== undefined,
    ),
  );
  try {
    const { kernel } = await createKernel({
      cwd: options.cwd ?? process.cwd(),
      inline: { presets: [LOCAL_ENGINES], models: { [MODEL_ID]: model } },
    });
    const settings = kernel.config.models[MODEL_ID]!;
    const choice = await kernel.get(Engines).select({ name: engine, key: '--engine', settings, needs });
    if (choice.skipped.length) log(`engine ${choice.name}; skipped ${choice.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`);
    const run = kernel.runContext({
      runDir: kernel.cwd,
      // The engine's account of what it loaded stays out of the command's output; its warnings do not.
      log: (message) => {
        if (message.startsWith('warning: ')) log(message);
      },
    });
    return await choice.factory.create({ modelId: MODEL_ID, settings, run });
  } catch (error) {
    throw atFlag(error);
  }
}
