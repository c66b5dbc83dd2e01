import { createKernel, DrmasError, formatBytes, MemoryEstimates, type MemoryEstimateReport } from '@drmas/core';
import { isBuiltinModelName } from '../builtin/builtinModels.js';
import { Tokenizer } from '../tokenizer/Tokenizer.js';
import { inspectModelFolder, type ModelFolderSummary } from '../weights/inspectModelFolder.js';

export interface ValidateOptions {
  cwd: string;
  configPath?: string;
  overrides?: string[];
}

/** One `models.<id>` as `drmas validate` found it. */
export interface ValidatedModel {
  id: string;
  /** `models.<id>.model` as resolved (a built-in name or an absolute folder). */
  model: string;
  folder?: ModelFolderSummary;
  tokenizer?: { chatTemplate: boolean; eos?: string; pad?: string };
}

export interface ValidateReport {
  configFile: string | null;
  models: ValidatedModel[];
  /** What a training step and an evaluation batch are estimated to hold (the memory check's arithmetic). */
  memory: MemoryEstimateReport[];
}

/**
 * Resolves the config and runs its `configure` and `validate` hooks (as `drmas train` does before loading anything),
 * then opens each `models.<id>.model` folder without reading its weights: config.json as a supported decoder, every
 * tensor's name and shape in the safetensors headers, the tokenizer and its chat template, the ids generation stops
 * on. Errors name the config key and the file at fault.
 */
export async function validateConfig(options: ValidateOptions): Promise<ValidateReport> {
  const { kernel, file, locate } = await createKernel({ cwd: options.cwd, configPath: options.configPath, overrides: options.overrides });
  const models: ValidatedModel[] = [];
  for (const [id, settings] of Object.entries(kernel.config.models)) {
    const model = settings.model;
    if (isBuiltinModelName(model)) {
      models.push({ id, model });
      continue;
    }
    const key = `models.${id}.model`;
    try {
      const folder = await inspectModelFolder(model);
      const tokenizer = folder.tokenizerDir ? await Tokenizer.fromDirectory(folder.tokenizerDir) : undefined;
      if (!tokenizer) {
        throw new DrmasError('CHECKPOINT_INVALID', `${folder.dir} has no tokenizer.json: the orchestras cannot encode prompts`, {
          hint: "copy the model's tokenizer.json and tokenizer_config.json into the folder (tokenizer.save_pretrained(folder))",
        });
      }
      models.push({
        id,
        model,
        folder,
        tokenizer: { chatTemplate: tokenizer.chatTemplate !== undefined, eos: tokenizer.eosToken, pad: tokenizer.padToken },
      });
    } catch (error) {
      if (!DrmasError.is(error)) throw error;
      throw error.at(key, `model ${id} (${model})`).locatedIn(locate(key));
    }
  }
  const memory = kernel.getAll(MemoryEstimates).flatMap((source) => [...source.estimates()]);
  return { configFile: file ?? null, models, memory };
}

/** The report as `drmas validate` prints it. */
export function formatValidateReport(report: ValidateReport): string {
  const lines = [`config ${report.configFile ?? '(none)'}: the configure and validate hooks pass`];
  for (const { id, model, folder, tokenizer } of report.models) {
    if (!folder) {
      lines.push(`model ${id}: built-in ${model}`);
      continue;
    }
    const c = folder.config;
    lines.push(
      `model ${id}: ${folder.dir}`,
      `  ${c.architecture}: ${c.numLayers} layers, hidden ${c.hiddenSize}, ${c.numHeads} heads over ${c.numKvHeads} KV heads of ${c.headDim}, vocab ${c.vocabSize}` +
        `${c.qkvBias ? ', QKV bias' : ''}${c.qkNorm ? ', q/k norm' : ''}${c.ropeScaling ? `, rope scaling ${c.ropeScaling.type}` : ''}`,
      `  ${folder.parameters.toLocaleString('en-US')} parameters (${folder.dtypes.join(', ')}, ${folder.files} safetensors file${folder.files > 1 ? 's' : ''}), ${
        c.tieWordEmbeddings ? 'output head tied to the embedding' : 'own output head'
      }`,
      `  tokenizer: ${tokenizer!.chatTemplate ? 'chat template' : 'no chat template (prompts go to the model as plain text)'}; eos ${tokenizer!.eos ?? '(none)'}, pad ${tokenizer!.pad ?? '(none)'}; generation stops on ids ${c.eosTokenIds.join(', ')}`,
    );
  }
  for (const { what, bytes, arithmetic, budget } of report.memory) {
    lines.push(`memory: ${what} holds about ${formatBytes(bytes)} of ${formatBytes(budget.bytes)} (${budget.description}): ${arithmetic}`);
  }
  return `${lines.join('\n')}\n`;
}
