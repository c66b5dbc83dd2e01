import type { Writable } from 'node:stream';
import { createTfjsPolicyBackend } from '../TfjsPolicyBackend.js';
import type { ArchitectureName } from '../model/ModelConfig.js';

export interface GenerateCommandOptions {
  /** `tiny`, `small` or a checkpoint folder. */
  model: string;
  /** Text prompt (needs the model's tokenizer). */
  prompt?: string;
  /** Prompt token ids, for checkpoints without a tokenizer. */
  promptIds?: number[];
  /** Wrap the prompt as a user message with the tokenizer's chat template. */
  chat?: boolean;
  maxNewTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  runtime?: string;
  architecture?: ArchitectureName;
}

export class CommandInputError extends Error {
  constructor(option: string, message: string) {
    super(`--${option}: ${message}`);
    this.name = 'CommandInputError';
  }
}

/**
 * `drmas generate`: samples a continuation and streams it to `out` as it is decoded (token ids, space-separated,
 * when the model has no tokenizer). Returns the generated ids.
 */
export async function generateCommand(options: GenerateCommandOptions, out: Writable = process.stdout): Promise<number[]> {
  const backend = await createTfjsPolicyBackend({
    model: options.model,
    runtime: options.runtime,
    seed: options.seed,
    architecture: options.architecture,
  });
  try {
    const tokenizer = backend.hfTokenizer;
    let promptIds = options.promptIds;
    if (!promptIds) {
      if (options.prompt === undefined) throw new CommandInputError('prompt', 'give a prompt');
      if (!tokenizer) {
        throw new CommandInputError('prompt', `${options.model} has no tokenizer.json; pass token ids instead`);
      }
      const text = options.chat
        ? tokenizer.applyChatTemplate([{ role: 'user', content: options.prompt }], { addGenerationPrompt: true })
        : options.prompt;
      promptIds = tokenizer.encode(text, { addSpecialTokens: !options.chat });
    }
    if (promptIds.length === 0) throw new CommandInputError('prompt', 'the prompt encodes to no tokens');
    const decoder = tokenizer?.createStreamingDecoder({ skipSpecialTokens: true });
    let first = true;
    const result = await backend.generate({
      prompts: [promptIds],
      maxNewTokens: options.maxNewTokens ?? 64,
      temperature: options.temperature ?? 1,
      topP: options.topP,
      topK: options.topK,
      seed: options.seed ?? 0,
      onToken: (_row, id) => {
        if (decoder) out.write(decoder.push(id));
        else out.write(`${first ? '' : ' '}${id}`);
        first = false;
      },
    });
    if (decoder) out.write(decoder.flush());
    out.write('\n');
    return result.tokenIds[0];
  } finally {
    backend.dispose();
  }
}
