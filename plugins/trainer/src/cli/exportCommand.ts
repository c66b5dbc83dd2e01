import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DrmasError, didYouMean, type CliCommand } from '@drmas/core';
import {
  ADAPTER_CONFIG_FILE,
  configJsonFor,
  isBuiltinModelName,
  loadLoraAdapter,
  loadModelWeights,
  mergeLoraAdapter,
  saveCheckpoint,
  type ModelSource,
} from '@drmas/models';

/** A LoRA agent's checkpoint folder: `<step>/<model>@<role>` holding PEFT's adapter_config.json. */
const isAdapterFolder = (dir: string) => existsSync(path.join(dir, ADAPTER_CONFIG_FILE));

/**
 * The adapter folder `checkpoint` names: itself when it is one, else (a `checkpoints/step-N` folder) its `<model>@<role>`
 * for `role`, which may be left out when the step holds one adapter.
 */
function adapterFolder(checkpoint: string, role: string | undefined): string {
  if (!existsSync(checkpoint)) {
    throw new DrmasError('INVALID_ARGUMENT', `${checkpoint} does not exist`, {
      key: 'checkpoint',
      hint: "give a run's checkpoints/step-NNNNNN folder (with --role) or a LoRA agent's folder in it",
    });
  }
  if (isAdapterFolder(checkpoint)) return checkpoint;
  const adapters = readdirSync(checkpoint, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.includes('@') && isAdapterFolder(path.join(checkpoint, entry.name)))
    .map((entry) => entry.name);
  if (adapters.length === 0) {
    throw new DrmasError('CHECKPOINT_INVALID', `${checkpoint} holds no LoRA adapter (no <model>@<role>/${ADAPTER_CONFIG_FILE})`, {
      file: checkpoint,
      hint: 'give the checkpoint of a run whose agents train with agents.<role>.lora; a full model folder needs no export',
    });
  }
  const roles = adapters.map((name) => name.slice(name.lastIndexOf('@') + 1));
  if (role === undefined) {
    if (adapters.length === 1) return path.join(checkpoint, adapters[0]!);
    throw new DrmasError('INVALID_ARGUMENT', `${checkpoint} holds the adapters of ${roles.join(', ')}: name one`, {
      key: '--role',
      hint: `e.g. --role ${roles[0]}`,
    });
  }
  const index = roles.indexOf(role);
  if (index < 0) {
    throw new DrmasError('INVALID_ARGUMENT', `${checkpoint} holds no adapter of role "${role}"`, {
      key: '--role',
      hint: `its LoRA roles are ${roles.join(', ')}.${didYouMean(role, roles)}`,
    });
  }
  return path.join(checkpoint, adapters[index]!);
}

/**
 * The frozen base an adapter trained on: `--base`, else the model of its group in the config.json of the run
 * (`<run>/checkpoints/step-N/<model>@<role>`) or of the sft / dpo output (`<out>/<model>@<role>`), with the seed and
 * architecture a built-in model was made with.
 */
function baseSource(adapterDir: string, base: string | undefined, cwd: string): ModelSource {
  if (base !== undefined) return { model: isBuiltinModelName(base) ? base : path.resolve(cwd, base) };
  const group = path.basename(adapterDir);
  const model = group.slice(0, group.lastIndexOf('@'));
  // A run's <run>/checkpoints/step-N/<group>, or the <out>/<group> of drmas sft and drmas dpo.
  const candidates = [path.resolve(adapterDir, '..', '..', '..', 'config.json'), path.resolve(adapterDir, '..', 'config.json')];
  const runConfig = candidates.find((file) => existsSync(file)) ?? candidates[0]!;
  const hint = `give the base model with --base (the folder or built-in name of models.${model || '<model>'}.model the run trained on)`;
  if (!model || !existsSync(runConfig)) {
    throw new DrmasError('INVALID_ARGUMENT', `cannot tell the base model of ${adapterDir}: no run config.json at ${runConfig}`, {
      key: '--base',
      hint,
    });
  }
  let config: { models?: Record<string, { model?: unknown; seed?: unknown; architecture?: unknown }>; trainer?: { seed?: unknown } };
  try {
    config = JSON.parse(readFileSync(runConfig, 'utf8')) as typeof config;
  } catch (cause) {
    throw new DrmasError('CONFIG_LOAD_FAILED', `cannot read the run's config: ${(cause as Error).message}`, { file: runConfig, hint });
  }
  const settings = config.models?.[model];
  if (typeof settings?.model !== 'string') {
    throw new DrmasError('INVALID_ARGUMENT', `the run's config has no models.${model}.model`, { file: runConfig, key: '--base', hint });
  }
  const seed = settings.seed ?? config.trainer?.seed;
  return {
    model: isBuiltinModelName(settings.model) ? settings.model : path.resolve(path.dirname(runConfig), settings.model),
    ...(typeof seed === 'number' ? { seed } : {}),
    ...(typeof settings.architecture === 'string' ? { architecture: settings.architecture as ModelSource['architecture'] } : {}),
  };
}

/**
 * `drmas export --merge-lora`: a LoRA agent's checkpoint as an ordinary Hugging Face model folder, its base with the
 * adapter merged in (PEFT's `merge_and_unload`: W + (alpha / r) B A), which drmas, transformers and vLLM load without
 * PEFT. The tokenizer and config.json are the adapter folder's (those of the base).
 */
export const exportCommand: CliCommand = {
  name: 'export',
  summary: "write a LoRA agent's checkpoint as a full Hugging Face model (its adapter merged into the base)",
  usage: 'drmas export --merge-lora CHECKPOINT [--role ROLE] --out DIR [--base MODEL]',
  help: [
    ['--merge-lora', "merge a LoRA agent's adapter into its base (the only export so far)"],
    ['CHECKPOINT', "a run's checkpoints/step-NNNNNN folder, or the <model>@<role> folder of one agent in it"],
    ['--role ROLE', 'the agent whose adapter to merge (needed when the step holds several)'],
    ['--out DIR', 'the model folder to write (config.json, model.safetensors in float32, the tokenizer)'],
    ['--base MODEL', "the base the adapter trained on (default: the model the run's config.json names)"],
  ],
  options: {
    'merge-lora': { type: 'boolean' },
    role: { type: 'string' },
    out: { type: 'string' },
    base: { type: 'string' },
  },
  positionals: true,
  async run({ values, positionals }, io) {
    if (!values['merge-lora']) {
      throw new DrmasError(
        'INVALID_ARGUMENT',
        'drmas export needs --merge-lora (a LoRA checkpoint merged into its base is the only export)',
        {
          key: '--merge-lora',
          hint: 'e.g. drmas export --merge-lora runs/<time>/checkpoints/step-000030 --role solver --out solver-merged',
        },
      );
    }
    if (positionals.length !== 1) {
      throw new DrmasError('INVALID_ARGUMENT', `drmas export takes one checkpoint folder, got ${positionals.length}`, {
        key: 'checkpoint',
        hint: 'e.g. drmas export --merge-lora runs/<time>/checkpoints/step-000030 --role solver --out solver-merged',
      });
    }
    if (typeof values.out !== 'string') {
      throw new DrmasError('INVALID_ARGUMENT', '--out is required', { key: '--out', hint: 'e.g. --out solver-merged' });
    }
    const folder = adapterFolder(path.resolve(io.cwd, positionals[0]!), values.role as string | undefined);
    const source = baseSource(folder, values.base as string | undefined, io.cwd);
    const base = await loadModelWeights(source);
    const adapter = await loadLoraAdapter(folder, base.config);
    const out = path.resolve(io.cwd, values.out);
    await saveCheckpoint(out, {
      config: configJsonFor(base.config),
      tensors: mergeLoraAdapter(base.config, base.weights, adapter),
      dtype: 'F32',
      tokenizerDir: folder,
    });
    const { rank, alpha, targetModules } = adapter.settings;
    io.stdout.write(`merged ${folder} (r=${rank}, lora_alpha=${alpha}, ${targetModules.join(', ')}) into ${source.model}: ${out}\n`);
    return 0;
  },
};

export default exportCommand;
