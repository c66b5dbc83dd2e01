import type { Writable } from 'node:stream';
import { DrmasError } from '@drmas/core';
import { openPolicyBackend, type EngineOptions } from './openPolicyBackend.js';
import type { ArchitectureName } from '../config/ModelConfig.js';

export interface GenerateCommandOptions extends Pick<EngineOptions, 'cwd' | 'log'> {
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
  /** The engine (`onnx`, `tfjs`); default `auto`: the best one available that samples, as training chooses. */
  engine?: string;
}

/** A `drmas generate` / `drmas score` option the command cannot use; `key` is the flag, e.g. `--prompt`. */
export class CommandInputError extends DrmasError {
  constructor(option: string, message: string, hint?: string) {
    super('INVALID_ARGUMENT', message, { key: `--${option}`, hint });
  }
}

/**
 * `drmas generate`: samples a continuation and streams it to `out` as it is decoded (token ids, space-separated,
 * when the model has no tokenizer). Returns the generated ids.
 */
export async function generateCommand(options: GenerateCommandOptions, out: Writable = process.stdout): Promise<number[]> {
  const backend = await openPolicyBackend(options.engine, {
    model: options.model,
    runtime: options.runtime,
    seed: options.seed,
    architecture: options.architecture,
    cwd: options.cwd,
    log: options.log,
  });
  try {
    const tokenizer = backend.tokenizer;
    let promptIds = options.promptIds;
    if (!promptIds) {
      if (options.prompt === undefined) throw new CommandInputError('prompt', 'give a prompt');
      if (!tokenizer) {
        throw new CommandInputError(
          'prompt',
          `${options.model} has no tokenizer.json to encode a text prompt`,
          'give the prompt as token ids: --prompt-ids 1,2,3',
        );
      }
      if (options.chat && !tokenizer.applyChatTemplate) {
        throw new CommandInputError(
          'chat',
          `${options.model} has no chat template`,
          'drop --chat, or use a checkpoint whose tokenizer_config.json has a chat_template',
        );
      }
      const text =
        options.chat && tokenizer.applyChatTemplate
          ? tokenizer.applyChatTemplate([{ role: 'user', content: options.prompt }], { addGenerationPrompt: true })
          : options.prompt;
      promptIds = tokenizer.encode(text, { addSpecialTokens: !options.chat });
    }
    if (promptIds.length === 0) throw new CommandInputError('prompt', 'the prompt encodes to no tokens');
    // Streams text as it becomes complete: a byte-level token may end inside a UTF-8 character (decoded as U+FFFD).
    const ids: number[] = [];
    let shown = '';
    let first = true;
    const result = await backend.generate({
      prompts: [promptIds],
      maxNewTokens: options.maxNewTokens ?? 64,
      temperature: options.temperature ?? 1,
      topP: options.topP,
      topK: options.topK,
      seed: options.seed ?? 0,
      onToken: (_row, id) => {
        if (tokenizer) {
          ids.push(id);
          const text = tokenizer.decode(ids, { skipSpecialTokens: true });
          if (!text.endsWith('\uFFFD') && text.startsWith(shown)) {
            out.write(text.slice(shown.length));
            shown = text;
          }
        } else {
          out.write(`${first ? '' : ' '}${id}`);
        }
        first = false;
      },
    });
    if (tokenizer) {
      const text = tokenizer.decode(ids, { skipSpecialTokens: true });
      if (text.startsWith(shown)) out.write(text.slice(shown.length));
    }
    out.write('\n');
    const [tokens] = result.tokenIds;
    if (tokens === undefined) throw new Error('generate returned no row for the one prompt');
    return tokens;
  } finally {
    backend.dispose();
  }
}
