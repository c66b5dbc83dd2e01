import { AUTO_BACKEND, createKernel, Engines, schemaAt, type EngineRequest, type KernelSetup } from '@drmas/core';
import { LOCAL_ENGINES } from '@drmas/models';
import type { EngineFactory } from './TrainingModels.js';

/** What a model of `drmas tinker-server` must do on its engine: `forward`, `forward_backward` and `optim_step`, `asample`. */
const NEEDS: EngineRequest['needs'] = ['sample', 'score', 'train'];

export interface LocalEngineOptions {
  /** The engine models train on (`--engine`): a registered name, or `auto` (default): the best available one. */
  engine?: string;
  /** Initialisation seed of built-in base models (`tiny`, `small`). */
  seed: number;
  /** Where the server's messages go: the engines skipped by `auto`, each model as it loads, warnings. */
  log: (message: string) => void;
  /** Where saved weights go (the engines' run directory). */
  dataDir: string;
}

/**
 * Opens the server's models on the engines `setup`'s kernel registers (its config's plugins, as training loads them),
 * each chosen by the engine service: `--engine` by name, or `auto` (onnx where onnxruntime-node loads, as for
 * training). A base model's settings are a `models.<id>` entry of that config's schema with `model` and `seed`, so
 * they carry the defaults training would give it. `name` is the engine `auto` takes for a built-in model.
 */
export async function localEngines(setup: KernelSetup, options: LocalEngineOptions): Promise<{ name: string; open: EngineFactory }> {
  const { kernel } = setup;
  const engines = kernel.get(Engines);
  const entry = schemaAt(setup.schema, ['models', 'base'])!;
  const request = (model: string): EngineRequest => ({
    name: options.engine ?? AUTO_BACKEND,
    key: '--engine',
    settings: entry.parse({ model, seed: options.seed }) as Record<string, unknown>,
    needs: NEEDS,
  });
  const first = await engines.select(request('tiny'));
  if (first.skipped.length) options.log(`engine ${first.name}; skipped ${first.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`);
  const run = kernel.runContext({ runDir: options.dataDir, log: options.log });
  let opened = 0;
  const open: EngineFactory = async (model) => {
    const asked = request(model);
    const { factory } = await engines.select(asked);
    return factory.create({ modelId: `tinker-${++opened}`, settings: asked.settings, run });
  };
  return { name: first.name, open };
}

/**
 * `localEngines` over the engines a config file loads (`configPath`, with `overrides`), or without one over drmas's
 * own engines where installed (`LOCAL_ENGINES`: onnx and tfjs).
 */
export async function openLocalEngines(
  options: LocalEngineOptions & { cwd: string; configPath?: string; overrides?: string[] },
): Promise<{ name: string; open: EngineFactory }> {
  const setup = await createKernel(
    options.configPath === undefined
      ? { cwd: options.cwd, inline: { presets: [LOCAL_ENGINES] } }
      : { cwd: options.cwd, configPath: options.configPath, overrides: options.overrides },
  );
  return localEngines(setup, options);
}
