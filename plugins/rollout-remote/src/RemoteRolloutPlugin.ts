import path from 'node:path';
import {
  BackendFactory,
  DrmasError,
  didYouMean,
  z,
  type ModelSettings,
  type Plugin,
  type RegisterContext,
  type RunContext,
} from '@drmas/core';
import { readModelShape } from '@drmas/models';
import { DIALECTS, type RemoteDialect } from './dialects.js';
import { remoteRolloutSchema, type RemoteRolloutSettings } from './remoteRolloutConfig.js';
import { RemoteEngine } from './RemoteEngine.js';
import { apiKeyFromEnv, ServerClient } from './ServerClient.js';

export const PLUGIN_NAME = 'rollout-remote';

/** Where pushed weights go in the run directory when `rollout.weightsDir` is not set. */
export const WEIGHTS_FOLDER = 'rollout-weights';

/**
 * The served model name for vLLM's `model` field: `servedModel`, else the one `/v1/models` lists under the model id,
 * else the only one it lists.
 */
async function servedModelName(client: ServerClient, modelId: string, settings: RemoteRolloutSettings): Promise<string> {
  if (settings.servedModel) return settings.servedModel;
  const listed = await client.get<{ data?: Array<{ id?: unknown }> }>('/v1/models');
  const names = (listed.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
  if (names.includes(modelId)) return modelId;
  if (names.length === 1) return names[0]!;
  throw new DrmasError(
    'CONFIG_INVALID',
    `${client.url} serves ${names.length ? names.join(', ') : 'no models'}; which one samples ${modelId}?`,
    {
      key: `models.${modelId}.rollout.servedModel`,
      hint: `set models.${modelId}.rollout.servedModel to the server's name for it${didYouMean(modelId, names)}`,
    },
  );
}

/** Why an engine of `dialect` cannot sample a model with `settings`: its `rollout` names no server of that kind. */
function noServer(dialect: RemoteDialect, settings: Record<string, unknown>): string | undefined {
  const remote = (settings as ModelSettings).rollout;
  if (typeof remote === 'object' && remote.kind === dialect.kind) return undefined;
  return `it samples on a ${dialect.kind} server, and models.<id>.rollout names none ({ kind: "${dialect.kind}", url: "http://host:port" })`;
}

/** The factory for one server family: `models.<id>.rollout: { kind: 'vllm' | 'sglang', url, ... }`. */
export function remoteRolloutFactory(dialect: RemoteDialect): BackendFactory {
  return {
    name: dialect.kind,
    capabilities: ['sample'],
    describe: () => `a ${dialect.kind} server (models.<id>.rollout: { kind: ${dialect.kind}, url }); samples only`,
    refuses: (settings) => noServer(dialect, settings),
    async create({ modelId, settings, run }: { modelId: string; settings: Record<string, unknown>; run: RunContext }) {
      const model = settings as ModelSettings;
      const key = `models.${modelId}.rollout`;
      if (noServer(dialect, settings) !== undefined) {
        throw new DrmasError('CONFIG_INVALID', `engine "${dialect.kind}" ${noServer(dialect, settings)}`, {
          key,
          hint: `set ${key}: { kind: "${dialect.kind}", url: "http://host:port" }`,
        });
      }
      // The config was checked against this plugin's form of the key: parsing again types it.
      const remote = remoteRolloutSchema.parse(model.rollout);
      const shape = readModelShape(model.model);
      if (!shape) {
        throw new DrmasError(
          'CONFIG_INVALID',
          `model ${modelId} (${model.model}) has no readable config.json to size the remote engine by`,
          {
            key: `models.${modelId}.model`,
          },
        );
      }
      const client = new ServerClient({ ...remote, key, apiKey: apiKeyFromEnv(remote.apiKeyEnv, key) });
      const servedModel = dialect.kind === 'vllm' ? await servedModelName(client, modelId, remote) : undefined;
      const weightsDir = path.resolve(run.runDir, remote.weightsDir ?? path.join(WEIGHTS_FOLDER, modelId));
      run.log(
        `model ${modelId}: samples on ${dialect.kind} at ${client.url}${servedModel ? ` (model "${servedModel}")` : ''}; ` +
          `weights pushed through ${weightsDir} (experimental)`,
      );
      return new RemoteEngine({
        modelId,
        dialect,
        client,
        servedModel,
        concurrency: remote.concurrency,
        weightsDir,
        vocabSize: shape.vocabSize,
        maxPositions: shape.maxPositions,
        log: (message) => run.log(message),
      });
    },
  };
}

/** Registers the `vllm` and `sglang` rollout engines and their form of `models.<id>.rollout`, a server. */
export class RemoteRolloutPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { models: z.strictObject({ rollout: remoteRolloutSchema }) };

  register(ctx: RegisterContext): void {
    for (const dialect of Object.values(DIALECTS)) ctx.provide(BackendFactory, dialect.kind, remoteRolloutFactory(dialect));
  }
}

export default function remoteRolloutPlugin(): RemoteRolloutPlugin {
  return new RemoteRolloutPlugin();
}
