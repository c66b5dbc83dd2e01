import type * as OrtModule from 'onnxruntime-node';
import { buildDecoderGraph, type DecoderGraphKind } from './DecoderGraph.js';
import type { Feeds } from './DecoderFeeds.js';
import { sessionOptions, type Ort, type ResolvedProvider } from './ExecutionProvider.js';
import { largeModelSessionOptions } from './training/LargeModelMemory.js';
import { OnnxBackendDisposedError } from './OnnxBackendErrors.js';
import type { WeightPrecision } from './weights/HalfWeights.js';
import { SharedSessions } from './SharedSessions.js';
import { graphShape, type WeightState } from './weights/WeightState.js';

type Session = OrtModule.InferenceSession;

export interface DecoderSessionsOptions {
  /** The engine's name (in the error of a use after `dispose`). */
  engine: string;
  /** Extra onnxruntime session options. */
  sessionOptions?: OrtModule.InferenceSession.SessionOptions;
  /** A pool shared with other engines of the same architecture; used when the weights are inputs. */
  shared?: SharedSessions<Session>;
  /** How the sampler's key/value caches hold their values (`buildDecoderGraph`'s `cache`; default `float32`). */
  kvCachePrecision?: WeightPrecision;
}

/**
 * An engine's sampling and scoring sessions (prefill, decode, score) over its `WeightState`: built on first use, from a
 * pool shared with a run's other engines or the engine's own, and run with the weights' feeds. Live until `dispose`.
 */
export class DecoderSessions {
  /** The sampling and scoring sessions: shared with a run's other engines, or the engine's own. */
  private readonly pool: SharedSessions<Session>;
  private usesSessions = false;
  /** What the sessions depend on besides the graph's kind (`sessionKeyOf`). */
  private sessionKey: string;
  private disposedRef = false;

  constructor(
    readonly ort: Ort,
    readonly provider: ResolvedProvider,
    private readonly state: WeightState,
    private readonly options: DecoderSessionsOptions,
  ) {
    this.pool = state.weightMode === 'inputs' && options.shared ? options.shared : rolloutSessionPool();
    this.sessionKey = this.sessionKeyOf();
  }

  /** How the prefill and decode graphs output, and the decode graph reads, keys and values. */
  get kvCachePrecision(): WeightPrecision {
    return this.options.kvCachePrecision ?? 'float32';
  }

  get disposed(): boolean {
    return this.disposedRef;
  }

  /** The graphs' inputs and options: everything a session depends on but the graph's kind and the weights' values. */
  private sessionKeyOf(): string {
    const { state, provider, options } = this;
    return JSON.stringify([
      graphShape(state.config),
      state.weightMode,
      state.layout,
      state.precision,
      state.lora?.settings ?? null,
      provider.provider,
      options.sessionOptions ?? null,
      this.kvCachePrecision,
    ]);
  }

  /** After `WeightState.reshape`: later sessions are those of the new shape. */
  reshaped(): void {
    this.sessionKey = this.sessionKeyOf();
  }

  /** The session of one graph, built on first use. */
  session(kind: DecoderGraphKind): Promise<Session> {
    this.ensureLive();
    if (!this.usesSessions) {
      this.pool.retain();
      this.usesSessions = true;
    }
    return this.pool.get(kind, this.sessionKey, () => {
      const { state } = this;
      const weights =
        state.precision === 'float16'
          ? new Map([...state.graphWeightShapes].map(([name, shape]) => [name, { shape }]))
          : state.graphWeights;
      const model = buildDecoderGraph(
        state.config,
        kind,
        weights,
        state.weightMode,
        state.lora?.settings,
        state.layout,
        state.precision,
        this.kvCachePrecision,
      );
      const options = largeModelSessionOptions(state.config, this.options.sessionOptions);
      return this.ort.InferenceSession.create(model, sessionOptions(this.provider.provider, options));
    });
  }

  async run(kind: DecoderGraphKind, feeds: Feeds): Promise<OrtModule.InferenceSession.ReturnType> {
    const session = await this.session(kind);
    return session.run({ ...this.state.feeds, ...feeds });
  }

  /** After the weights changed in place: the derived graph weights follow (sessions rebuilt when weights are initializers). */
  async weightsChanged(): Promise<void> {
    if (!this.state.weightsChanged()) return;
    if (this.state.weightMode === 'initializers') await this.release();
  }

  /** Lets go of the sessions (released once no engine sharing them uses them). */
  async release(): Promise<void> {
    if (!this.usesSessions) return;
    this.usesSessions = false;
    await this.pool.release();
  }

  ensureLive(): void {
    if (this.disposedRef) throw new OnnxBackendDisposedError(this.options.engine);
  }

  /** Lets go of the sessions; every later use throws `OnnxBackendDisposedError`. */
  dispose(): void {
    this.disposedRef = true;
    void this.release().catch(() => undefined);
  }
}

/** A pool of sampling and scoring sessions for a run's engines of one architecture to share. */
export function rolloutSessionPool(): SharedSessions<Session> {
  return new SharedSessions((s) => s.release());
}
