import {
  AUTO_BACKEND,
  BackendFactory,
  DrmasError,
  redactUrl,
  secretEnvName,
  secretUrl,
  z,
  type ApplyContext,
  type ModelSettings,
  type Plugin,
  type RegisterContext,
} from '@drmas/core';
import { builtinTokenizer, isBuiltinModelName, readModelShape, Tokenizer } from '@drmas/models';
import { TinkerClient } from '../client/TinkerClient.js';
import { detectServer, serverByUrl, TINKER_SERVER_TRAITS, TINKER_SERVERS } from '../client/tinkerServers.js';
import { loraOnly, TinkerPolicyBackend } from '../TinkerPolicyBackend.js';

const PLUGIN_NAME = 'backend-tinker';
export const TINKER_BACKEND = 'tinker';

/** `models.<id>.tinker`: the server a model trains and samples on, and how patiently it is called. */
export const tinkerSettingsSchema = z.strictObject({
  /** The server, without `/api/v1` (`drmas tinker-server` prints its own); user info in it goes as basic auth, hidden. */
  baseUrl: secretUrl({ protocol: /^https?$/ }),
  /** Environment variable holding the API key, sent as `X-API-Key` (the key itself never goes in a config file, nor in a message). */
  apiKeyEnv: secretEnvName().default('TINKER_API_KEY'),
  /**
   * Which server this is, for what it takes (client/tinkerServers.ts): hosted Tinker (protobuf, LoRA only, sampling
   * sessions), SkyRL tx (JSON, no gradient clipping) or drmas tinker-server; auto: hosted by its host, else asked.
   */
  server: z.enum(['auto', ...TINKER_SERVERS]).default('auto'),
  /** The model the server fine-tunes (`Qwen/Qwen3-8B`); default `models.<id>.model`, whose tokenizer is read locally. */
  baseModel: z.string().min(1).optional(),
  /** LoRA rank; 0 trains all weights, on a server that offers it (SkyRL, drmas tinker-server; not hosted Tinker). */
  loraRank: z.number().int().min(0).max(1024).default(32),
  /** Per HTTP call but a poll of a result. */
  timeoutMs: z.number().int().min(1).max(3_600_000).default(60_000),
  /** Per poll of a result: longer than SkyRL holds one (300 s, then 408), so polls are answered rather than aborted. */
  pollTimeoutMs: z.number().int().min(1).max(3_600_000).default(330_000),
  /** Between two session heartbeats (SkyRL unloads a session's models 300 s after its last). */
  heartbeatMs: z.number().int().min(100).max(120_000).default(10_000),
  /** Further tries of a call that failed on the network, with 429 or with 5xx. */
  retries: z.number().int().min(0).max(20).default(3),
  retryDelayMs: z.number().int().min(0).max(60_000).default(500),
  /** How long one request may stay unfinished on the server. */
  futureTimeoutMs: z.number().int().min(1).max(86_400_000).default(600_000),
  /** Wait between polls of a request the server says to try again. */
  pollIntervalMs: z.number().int().min(0).max(60_000).default(200),
  /** Times a request whose result expired (410) is submitted again, for requests that change nothing on the server. */
  resubmits: z.number().int().min(0).max(10).default(2),
});

export type TinkerSettings = z.output<typeof tinkerSettingsSchema>;

/** The `tinker` backend: `models.<id>.backend: tinker` trains (and samples) the model on a Tinker API server. */
export const tinkerBackendFactory: BackendFactory = {
  name: TINKER_BACKEND,
  capabilities: ['sample', 'score', 'train'],
  remoteWeights: true,
  describe: () => 'a Tinker API server (models.<id>.tinker.baseUrl): LoRA training and sampling run there, the loss on this machine',
  location: (settings) => {
    const baseUrl = (settings.tinker as TinkerSettings | undefined)?.baseUrl;
    return baseUrl === undefined ? undefined : redactUrl(baseUrl);
  },
  async create({ modelId, settings, run }) {
    const model = settings as ModelSettings & { tinker?: TinkerSettings };
    const key = `models.${modelId}.tinker`;
    const tinker = model.tinker;
    if (!tinker) throw missingSection(modelId);
    const shape = readModelShape(model.model);
    if (!shape) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `the tinker backend reads the tokenizer and vocabulary of ${model.model} locally, and it is neither built in nor a checkpoint folder`,
        {
          key: `models.${modelId}.model`,
          hint: 'point models.<id>.model at a local copy of the base model (config.json and tokenizer files are enough)',
        },
      );
    }
    const tokenizer = isBuiltinModelName(model.model) ? builtinTokenizer(shape.vocabSize) : await Tokenizer.fromDirectory(model.model);
    const client = new TinkerClient({ ...tinker, apiKey: process.env[tinker.apiKeyEnv], key });
    const log = (message: string) => run.log(message);
    const server = tinker.server === 'auto' ? await detectServer(client, log) : tinker.server;
    const backend = await TinkerPolicyBackend.create({
      name: `tinker:${modelId}`,
      client,
      server: TINKER_SERVER_TRAITS[server],
      log,
      baseModel: tinker.baseModel ?? model.model,
      loraRank: tinker.loraRank,
      seed: model.seed,
      tokenizer,
      vocabSize: shape.vocabSize,
      maxPositions: shape.maxPositions,
      key,
    });
    run.log(`model ${modelId}: trains on ${backend.runtime}`);
    return backend;
  },
};

function missingSection(modelId: string): DrmasError {
  return new DrmasError('CONFIG_INVALID', `model ${modelId} trains on the tinker backend but has no tinker section`, {
    key: `models.${modelId}.tinker`,
    hint: 'add models.<id>.tinker: { baseUrl: "http://127.0.0.1:8000" } (drmas tinker-server prints its url)',
  });
}

/** Registers the `tinker` backend and checks at validation that each model on it says where its server is. */
export class TinkerBackendPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { models: z.strictObject({ tinker: tinkerSettingsSchema.optional() }) };

  register(ctx: RegisterContext): void {
    ctx.provide(BackendFactory, TINKER_BACKEND, tinkerBackendFactory);
  }

  apply(kernel: ApplyContext): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      for (const [id, model] of Object.entries(config.models)) {
        if (model.backend !== TINKER_BACKEND) continue;
        if (!model.tinker) throw missingSection(id);
        const tinker = tinkerSettingsSchema.parse(model.tinker);
        const server = tinker.server === 'auto' ? serverByUrl(tinker.baseUrl) : tinker.server;
        if (server && TINKER_SERVER_TRAITS[server].loraOnly && tinker.loraRank === 0) throw loraOnly(`models.${id}.tinker`);
        if (model.rollout !== undefined && model.rollout !== TINKER_BACKEND && model.rollout !== AUTO_BACKEND) {
          throw new DrmasError(
            'CONFIG_INVALID',
            `model ${id} trains on Tinker, whose weights stay on the server, so it cannot sample on ${describeRollout(model.rollout)}`,
            {
              key: `models.${id}.rollout`,
              hint: 'remove models.<id>.rollout (or set it to auto): a model on the tinker backend samples through the Tinker server',
            },
          );
        }
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['backend-tinker']`. */
export default function tinkerBackendPlugin(): TinkerBackendPlugin {
  return new TinkerBackendPlugin();
}

declare module '@drmas/core' {
  interface ModelConfig {
    /** The Tinker API server of a model on the tinker backend. */
    tinker?: z.input<typeof tinkerSettingsSchema>;
  }
}

function describeRollout(rollout: string | { kind: string; url: string }): string {
  return typeof rollout === 'string' ? rollout : `${rollout.kind} at ${redactUrl(rollout.url)}`;
}
