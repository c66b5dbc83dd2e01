import type { TinkerClient } from './TinkerClient.js';

/** The Tinker API servers drmas speaks to, which differ in what they take (read from their sources, named below). */
export const TINKER_SERVERS = ['hosted', 'skyrl', 'drmas'] as const;
export type TinkerServerName = (typeof TINKER_SERVERS)[number];

/** What one server takes and does. */
export interface TinkerServerTraits {
  name: TinkerServerName;
  /**
   * `forward_backward` as protobuf (`tinker_public.ForwardBackwardRequest`), and a forward as one with
   * `forward_only`; else JSON, and `/forward`.
   */
  protobuf: boolean;
  /** Whether `optim_step` applies `adam_params.grad_clip_norm`. */
  clipsGradients: boolean;
  /** Whether only LoRA adapters train (no `lora_config.rank` 0 for full weights). */
  loraOnly: boolean;
  /** Sampling through sampling sessions (`save_weights_for_sampler` with `sampling_session_seq_id`), not `model_path`. */
  samplingSessions: boolean;
  /** The most datums and estimated bytes one `forward_backward` carries; more go in several, each its own seq_id. */
  chunk?: { datums: number; bytes: number };
  /** Where `optim_step` reports the gradient norm before clipping. */
  gradNormMetric: string;
}

export const TINKER_SERVER_TRAITS: Readonly<Record<TinkerServerName, TinkerServerTraits>> = {
  // tinker SDK 0.38.0 (PyPI; thinking-machines-lab/tinker d595dc2 for 0.25): resources/training.py sends protobuf,
  // training_client.py chunks at ClientConfigResponse's fwdbwd_max_chunk_len 1024 / fwdbwd_max_chunk_bytes_count
  // 5,000,000, forward is forward_backward with forward_only, ServiceClient trains LoRA only, SamplingClient samples
  // through a sampling session. The norm's metric name is not documented: both names are read.
  hosted: {
    name: 'hosted',
    protobuf: true,
    clipsGradients: true,
    loraOnly: true,
    samplingSessions: true,
    chunk: { datums: 1024, bytes: 5_000_000 },
    gradNormMetric: 'grad_norm',
  },
  // SkyRL tx (skyrl 0.3.0 on PyPI, skyrl/tinker/api.py; NovaSky-AI/SkyRL a9564572 for main): JSON, /forward served,
  // AdamParams without grad_clip_norm (pydantic drops it), the norm as skyrl.ai/grad_norm, rank 0 trains all weights.
  skyrl: {
    name: 'skyrl',
    protobuf: false,
    clipsGradients: false,
    loraOnly: false,
    samplingSessions: false,
    gradNormMetric: 'skyrl.ai/grad_norm',
  },
  // drmas tinker-server (this package's server/): JSON, full weights, clipping applied.
  drmas: {
    name: 'drmas',
    protobuf: false,
    clipsGradients: true,
    loraOnly: false,
    samplingSessions: false,
    gradNormMetric: 'grad_norm',
  },
};

/** Hosts of the hosted service (the SDK's DEFAULT_BASE_URL is https://tinker.thinkingmachines.dev/services/tinker-prod). */
const HOSTED = /(^|\.)thinkingmachines\.(dev|ai)$/;

/** The server a `baseUrl` names without asking it: hosted Tinker by its host, else undefined. */
export function serverByUrl(baseUrl: string): TinkerServerName | undefined {
  return HOSTED.test(new URL(baseUrl).hostname) ? 'hosted' : undefined;
}

/**
 * Which server answers at `client.baseUrl` (`tinker.server: auto`): hosted Tinker by its host; else SkyRL, whose root
 * route names itself "Tinker API Mock"; else `drmas tinker-server`, whose health route says so; else SkyRL's traits
 * (the self-hosted Tinker API), logged.
 */
export async function detectServer(client: TinkerClient, log: (message: string) => void): Promise<TinkerServerName> {
  const byUrl = serverByUrl(client.baseUrl);
  if (byUrl) return byUrl;
  const health = await client.get<{ server?: unknown }>('healthz').catch(() => undefined);
  if (health?.server === DRMAS_SERVER_NAME) return 'drmas';
  const root = await client.root<{ name?: unknown }>().catch(() => undefined);
  if (root?.name !== SKYRL_ROOT_NAME) {
    log(`${client.shownUrl} names itself neither SkyRL nor drmas tinker-server; it is spoken to as SkyRL (set tinker.server to choose)`);
  }
  return 'skyrl';
}

/** What `GET /api/v1/healthz` of `drmas tinker-server` answers as `server`. */
export const DRMAS_SERVER_NAME = 'drmas tinker-server';
/** What SkyRL's `GET /` answers as `name` (skyrl/tinker/api.py). */
const SKYRL_ROOT_NAME = 'Tinker API Mock';
