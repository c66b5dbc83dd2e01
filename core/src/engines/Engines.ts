import { createToken } from '../di/Token.js';
import type { BackendFactory, EngineCapability } from './BackendFactory.js';

/** What a caller asks of the engine service: an engine that does `needs` for a model with `settings`. */
export interface EngineRequest {
  /** What the engine must do, every one of them. */
  needs: readonly EngineCapability[];
  /** The model's settings (`models.<id>`, defaults applied): engines rank and check them. */
  settings: Record<string, unknown>;
  /** The engine the user named at `key`; undefined or `auto`: the highest-ranked engine that fits and is available. */
  name?: string;
  /** The config key or command-line flag that chose (`models.policy.backend`, `--engine`): messages name it. */
  key: string;
  /**
   * The engine the model already runs on (the trainer's, when its rollout engine is chosen): `auto` takes it, without
   * probing, once the ranking reaches it or when nothing ranked above it fits; when its weights stay on a server
   * (`remoteWeights`) it is the only choice.
   */
  loadedOn?: string;
}

/** An engine `select` passed over, and why: not installed, failed to load (the error), lacks a capability, refused the settings. */
export interface EngineSkip {
  name: string;
  reason: string;
}

export interface EngineChoice {
  name: string;
  factory: BackendFactory;
  /** The engines ranked above it that `auto` passed over, each with its reason (none for a named engine). */
  skipped: readonly EngineSkip[];
}

/**
 * The engine service: the one selection every caller makes (the trainer's policy, rollout, reference and critic
 * engines, `drmas score`, `generate` and `eval`, the gateway, rollout workers, `drmas tinker-server`), over the
 * `BackendFactory` contributions the backend plugins register. Inject it as `@inject(Engines) engines: Engines`.
 */
export interface Engines {
  /** The registered engines, in registration order. */
  names(): string[];
  /**
   * The engine registered as `name`; an unknown name is UNKNOWN_NAME at `key` with "Did you mean ...?", one that an
   * absent optional plugin provides says what to install.
   */
  get(name: string, key: string): BackendFactory;
  /**
   * The engine for `request`, probed (an engine's library loads once). A named engine that cannot serve, or an `auto`
   * that finds none, is one DrmasError at `request.key` listing each candidate and why it was skipped, with the fix.
   */
  select(request: EngineRequest): Promise<EngineChoice>;
  /**
   * The engines `auto` would try for `request`, best first, without loading anything (`drmas info`, memory
   * estimates): those with a priority that do everything `needs` asks and accept the settings.
   */
  ranked(request: Pick<EngineRequest, 'needs' | 'settings'>): string[];
  /** An engine as `drmas info` names it: with the server it runs on (`tinker at http://...`), if remote. */
  describe(name: string, settings: Record<string, unknown>): string;
}
export const Engines = createToken<Engines>('Engines', { label: 'engine service' });
